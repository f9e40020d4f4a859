// The notices' reads of the usage report and their own tables (migrations 70 and 72), in the
// gateway's store so that every gateway sees the same (docs/gateway.md#migration-notices).
//
// Choices: a pass reads the usage rows of the users whose rows changed since the method's
// last sweep (auth_usage_last_seen index), then only those users' own rows (the primary
// key's (method, user_id) prefix): never every row of the report. Login-API rows name the
// site as their client; a site is matched by its name as the usage report keeps it (the
// first 64 characters).
import type { Db, Queryable } from '../../common/sql.js'
import type { Deployment } from '../../common/deployment.js'
import { maxClientLength } from '../usage/client-name.js'
import type { NoticeStep, Told } from './rules.js'

const iso = (ms: number) => new Date(ms).toISOString()
const ms = (v: Date | string) => new Date(v).getTime()

/** A legacy usage row of a recipient (a user, or a login-API site's owner for its site's sign-ins). */
export interface RecipientRow {
  /** The user told: the user of the row, or for login_api the site's owner. */
  recipient: string
  /** The user whose requests the row counts (the same as recipient, except for login_api). */
  user: string
  client: string
  accepted: number
  refusedByPolicy: number
  firstSeen: number
  lastSeen: number
  /** The deployment the row's latest request came through. */
  deployment: Deployment
}

export interface Recipient {
  id: string
  name: string
  email: string | null
}

export interface NoticeRecord {
  user: string
  method: string
  step: NoticeStep
  email: string | null
  messageKey: string | null
  createdAt: number
  /** The refusal date the notice told (null when none was set). */
  refusalAt: number | null
}

export interface PlanCounts {
  users: number
  usersWithEmail: number
  clients: number
  requests: number
  sites: number
}

/** A user or a user's client the plan leaves out (an exception in force when the change begins). */
export interface Excluded {
  user: string
  client?: string
}

const siteName = `left(s.name, ${maxClientLength})`

export class NoticeStore {
  constructor(private readonly db: Db) {}

  /** Who a change of `method` would touch: users with accepted requests seen since `since`, and (login_api) the sites they signed in to. */
  async planCounts(method: string, since: number, excluded: Excluded[]): Promise<PlanCounts> {
    const rows = await this.db.query<{ users: string | number; with_email: string | number; clients: string | number; requests: string | number | null; sites: string | number }>(
      `WITH r AS (
         SELECT a.user_id, a.client, a.accepted FROM kigo_gateway.auth_usage a
         WHERE a.method = $1 AND a.last_seen >= $2 AND a.accepted > 0
           AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS e(user_id, client)
                           WHERE e.user_id = a.user_id AND (e.client IS NULL OR e.client = a.client))
       )
       SELECT count(DISTINCT r.user_id) AS users,
              count(DISTINCT r.user_id) FILTER (WHERE w.email IS NOT NULL) AS with_email,
              count(DISTINCT r.client) AS clients,
              sum(r.accepted) AS requests,
              (SELECT count(*) FROM kigo_gateway.login_sites s WHERE $1 = 'login_api' AND ${siteName} IN (SELECT client FROM r)) AS sites
       FROM r LEFT JOIN kigo_gateway.users w ON w.id = r.user_id`,
      [method, iso(since), excluded.map((e) => e.user), excluded.map((e) => e.client ?? null)],
    )
    const r = rows[0]!
    return { users: Number(r.users), usersWithEmail: Number(r.with_email), clients: Number(r.clients), requests: Number(r.requests ?? 0), sites: Number(r.sites) }
  }

  /**
   * The recipients whose rows of `method` were seen after `after` (and since `since`):
   * users, or for login_api the owners of the sites signed in to.
   */
  async changedRecipients(method: string, since: number, after: number): Promise<string[]> {
    const from = iso(Math.max(since, after))
    const rows = method === 'login_api'
      ? await this.db.query<{ id: string }>(
        `SELECT DISTINCT s.owner_id AS id FROM kigo_gateway.login_sites s
         WHERE ${siteName} IN (SELECT DISTINCT client FROM kigo_gateway.auth_usage WHERE method = 'login_api' AND last_seen >= $1 AND (accepted > 0 OR refused_by_policy > 0))`,
        [from],
      )
      : await this.db.query<{ id: string }>(
        `SELECT DISTINCT user_id AS id FROM kigo_gateway.auth_usage
         WHERE last_seen >= $2 AND method = $1 AND (accepted > 0 OR refused_by_policy > 0)`,
        [method, from],
      )
    return rows.map((r) => r.id).sort()
  }

  /** The rows of `method` seen since `since` that the given recipients are told about. */
  async recipientRows(method: string, recipients: string[], since: number): Promise<RecipientRow[]> {
    if (recipients.length === 0) return []
    type Row = { recipient: string; user_id: string; client: string; accepted: string | number; refused_by_policy: string | number; first_seen: Date | string; last_seen: Date | string; deployment: Deployment }
    const rows = method === 'login_api'
      // A site owner is told about their site as one client: its sign-ins by every user.
      ? await this.db.query<Row>(
        `SELECT s.owner_id AS recipient, s.owner_id AS user_id, a.client, sum(a.accepted) AS accepted, sum(a.refused_by_policy) AS refused_by_policy,
                min(a.first_seen) AS first_seen, max(a.last_seen) AS last_seen, (array_agg(a.deployment ORDER BY a.last_seen DESC))[1] AS deployment
         FROM kigo_gateway.login_sites s JOIN kigo_gateway.auth_usage a ON a.method = 'login_api' AND a.client = ${siteName}
         WHERE s.owner_id = ANY($1::text[]) AND a.last_seen >= $2 AND (a.accepted > 0 OR a.refused_by_policy > 0)
         GROUP BY s.owner_id, a.client`,
        [recipients, iso(since)],
      )
      : await this.db.query<Row>(
        `SELECT user_id AS recipient, user_id, client, accepted, refused_by_policy, first_seen, last_seen, deployment FROM kigo_gateway.auth_usage
         WHERE method = $1 AND user_id = ANY($2::text[]) AND last_seen >= $3 AND (accepted > 0 OR refused_by_policy > 0)`,
        [method, recipients, iso(since)],
      )
    return rows.map((r) => ({ recipient: r.recipient, user: r.user_id, client: r.client, accepted: Number(r.accepted), refusedByPolicy: Number(r.refused_by_policy), firstSeen: ms(r.first_seen), lastSeen: ms(r.last_seen), deployment: r.deployment === 'global' ? 'global' : 'domestic' }))
  }

  /**
   * OAuth and OpenID Connect rows for the moved rule: the users' own (basic, wsse), or
   * for login-API sites every OpenID Connect row of the sites' names' families.
   */
  async modernRows(method: string, users: string[]): Promise<Array<{ method: string; user: string; client: string; lastSeen: number }>> {
    if (users.length === 0) return []
    const rows = method === 'login_api'
      ? await this.db.query<{ method: string; user_id: string; client: string; last_seen: Date | string }>(
        `SELECT 'oidc' AS method, s.owner_id AS user_id, a.client, max(a.last_seen) AS last_seen
         FROM kigo_gateway.auth_usage a JOIN kigo_gateway.login_sites s ON s.owner_id = ANY($1::text[])
         WHERE a.method = 'oidc' GROUP BY s.owner_id, a.client`,
        [users],
      )
      : await this.db.query<{ method: string; user_id: string; client: string; last_seen: Date | string }>(
        `SELECT method, user_id, client, last_seen FROM kigo_gateway.auth_usage WHERE method IN ('oauth', 'oidc') AND user_id = ANY($1::text[])`,
        [users],
      )
    return rows.map((r) => ({ method: r.method, user: r.user_id, client: r.client, lastSeen: ms(r.last_seen) }))
  }

  /** The users' names and contact e-mails. */
  async recipients(ids: string[]): Promise<Map<string, Recipient>> {
    if (ids.length === 0) return new Map()
    const rows = await this.db.query<{ id: string; name: string; email: string | null }>('SELECT id, name, email FROM kigo_gateway.users WHERE id = ANY($1::text[])', [ids])
    return new Map(rows.map((r) => [r.id, { id: r.id, name: r.name, email: r.email }]))
  }

  /** What each recipient was told of `method`: the steps with when, and the date their latest dated notice told. */
  async told(method: string, users: string[]): Promise<Map<string, Told>> {
    const out = new Map<string, { steps: Map<NoticeStep, number>; refusalAt: number | null; toldAt: number }>()
    if (users.length === 0) return out
    const rows = await this.db.query<{ user_id: string; step: NoticeStep; created_at: Date | string; refusal_at: Date | string | null }>(
      'SELECT user_id, step, created_at, refusal_at FROM kigo_gateway.notices WHERE method = $1 AND user_id = ANY($2::text[])',
      [method, users],
    )
    for (const r of rows) {
      if (!out.has(r.user_id)) out.set(r.user_id, { steps: new Map(), refusalAt: null, toldAt: -Infinity })
      const told = out.get(r.user_id)!
      const at = ms(r.created_at)
      // date_moved is told once per date: the step's time is that of its latest.
      told.steps.set(r.step, Math.max(at, told.steps.get(r.step) ?? -Infinity))
      // The steps of one message share its time and date: the latest message's date is the one told.
      if (r.refusal_at !== null && at >= told.toldAt) {
        told.refusalAt = ms(r.refusal_at)
        told.toldAt = at
      }
    }
    return out
  }

  /**
   * Records the steps told (on `tx`, beside the message); a step already recorded stays as
   * it was (date_moved: the same new date). Returns the steps newly recorded.
   */
  async record(tx: Queryable, records: NoticeRecord[]): Promise<NoticeRecord[]> {
    if (records.length === 0) return []
    const rows = await tx.query<{ user_id: string; method: string; step: string }>(
      `INSERT INTO kigo_gateway.notices (user_id, method, step, email, message_key, created_at, refusal_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])
       ON CONFLICT DO NOTHING
       RETURNING user_id, method, step`,
      [records.map((r) => r.user), records.map((r) => r.method), records.map((r) => r.step), records.map((r) => r.email), records.map((r) => r.messageKey), records.map((r) => iso(r.createdAt)), records.map((r) => (r.refusalAt === null ? null : iso(r.refusalAt)))],
    )
    const fresh = new Set(rows.map((r) => `${r.user_id}\n${r.method}\n${r.step}`))
    return records.filter((r) => fresh.has(`${r.user}\n${r.method}\n${r.step}`))
  }

  /** The notices recorded, newest first. */
  async list(filter: { user?: string; method?: string; limit?: number } = {}): Promise<NoticeRecord[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.user !== undefined) where.push(`user_id = $${params.push(filter.user)}`)
    if (filter.method !== undefined) where.push(`method = $${params.push(filter.method)}`)
    const rows = await this.db.query<{ user_id: string; method: string; step: NoticeStep; email: string | null; message_key: string | null; created_at: Date | string; refusal_at: Date | string | null }>(
      `SELECT user_id, method, step, email, message_key, created_at, refusal_at FROM kigo_gateway.notices
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, user_id, method, step LIMIT $${params.push(filter.limit ?? 10_000)}`,
      params,
    )
    return rows.map((r) => ({ user: r.user_id, method: r.method, step: r.step, email: r.email, messageKey: r.message_key, createdAt: ms(r.created_at), refusalAt: r.refusal_at === null ? null : ms(r.refusal_at) }))
  }

  /** How far `method` was swept, for which due steps. */
  async sweep(method: string): Promise<{ signature: string; sweptUntil: number } | null> {
    const rows = await this.db.query<{ signature: string; swept_until: Date | string }>('SELECT signature, swept_until FROM kigo_gateway.notice_sweeps WHERE method = $1', [method])
    return rows[0] ? { signature: rows[0].signature, sweptUntil: ms(rows[0].swept_until) } : null
  }

  async setSweep(method: string, signature: string, sweptUntil: number): Promise<void> {
    await this.db.query(
      `INSERT INTO kigo_gateway.notice_sweeps (method, signature, swept_until) VALUES ($1, $2, $3)
       ON CONFLICT (method) DO UPDATE SET signature = EXCLUDED.signature, swept_until = EXCLUDED.swept_until`,
      [method, signature, iso(sweptUntil)],
    )
  }

  /** Takes (or renews) the one lease a pass runs under; false when another holder has it. */
  async claimLease(holder: string, now: number, ttlMs: number): Promise<boolean> {
    const rows = await this.db.query<{ holder: string }>(
      `INSERT INTO kigo_gateway.notice_lease (id, holder, until) VALUES (1, $1, $2)
       ON CONFLICT (id) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until
         WHERE kigo_gateway.notice_lease.holder = EXCLUDED.holder OR kigo_gateway.notice_lease.until < $3
       RETURNING holder`,
      [holder, iso(now + ttlMs), iso(now)],
    )
    return rows.length === 1
  }

  async releaseLease(holder: string): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.notice_lease WHERE id = 1 AND holder = $1', [holder])
  }

  /** Notices per method and step: how many were recorded with an address and without. */
  async counts(): Promise<Array<{ method: string; step: NoticeStep; mailed: number; unreachable: number }>> {
    const rows = await this.db.query<{ method: string; step: NoticeStep; mailed: string | number; unreachable: string | number }>(
      `SELECT method, step, count(*) FILTER (WHERE email IS NOT NULL) AS mailed, count(*) FILTER (WHERE email IS NULL) AS unreachable
       FROM kigo_gateway.notices GROUP BY method, step ORDER BY method, step`,
    )
    return rows.map((r) => ({ method: r.method, step: r.step, mailed: Number(r.mailed), unreachable: Number(r.unreachable) }))
  }

  /**
   * For each recipient's first notice of a method: whether their accepted requests of
   * the method stopped within 7 and within 30 days of it (counted once that long has
   * passed), against those who still made one 7 days or more after it (not moved). For
   * login_api, the owner's own sign-ins through the login API.
   */
  async effect(now: number): Promise<Array<{ method: string; told: number; moved7: number; moved30: number; notMoved: number }>> {
    const rows = await this.db.query<{ method: string; told: string | number; moved7: string | number; moved30: string | number; not_moved: string | number }>(
      `WITH first AS (
         SELECT user_id, method, min(created_at) AS told_at FROM kigo_gateway.notices GROUP BY user_id, method
       ), last AS (
         SELECT f.user_id, f.method, f.told_at,
                (SELECT max(a.last_seen) FROM kigo_gateway.auth_usage a WHERE a.method = f.method AND a.user_id = f.user_id AND a.accepted > 0) AS last_legacy
         FROM first f
       )
       SELECT method, count(*) AS told,
              count(*) FILTER (WHERE told_at + interval '7 days' <= $1 AND (last_legacy IS NULL OR last_legacy < told_at + interval '7 days')) AS moved7,
              count(*) FILTER (WHERE told_at + interval '30 days' <= $1 AND (last_legacy IS NULL OR last_legacy < told_at + interval '30 days')) AS moved30,
              count(*) FILTER (WHERE last_legacy >= told_at + interval '7 days') AS not_moved
       FROM last GROUP BY method ORDER BY method`,
      [iso(now)],
    )
    return rows.map((r) => ({ method: r.method, told: Number(r.told), moved7: Number(r.moved7), moved30: Number(r.moved30), notMoved: Number(r.not_moved) }))
  }
}
