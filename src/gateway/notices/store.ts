// The notices' reads of the usage report and their own tables (migrations 70 and 72), in the
// gateway's store so that every gateway sees the same (docs/gateway.md#migration-notices).
//
// Choices: a pass reads the usage rows of the users whose rows changed since the method's
// last sweep (auth_usage_last_seen index), then only those users' own rows (the primary
// key's (method, user_id) prefix): never every row of the report. Login-API rows name the
// site by its api_key (client_id), never by its name, which another user may share; an
// OpenID Connect row names its client by client_id, and so its owner. An OAuth 1.0a row
// (method oauth, governed by the policy method oauth1) names its application by its consumer
// key (client_id): its recipient is the application's owner, never the users whose tokens
// it used (docs/gateway.md#oauth-10a-as-a-legacy-method).
import type { Db, Queryable } from '../../common/sql.js'
import type { Deployment } from '../../common/deployment.js'
import { maxClientLength } from '../usage/client-name.js'
import { modernMethods, type Oauth2Facts } from '../usage/moved.js'
import { Oauth1ExchangeStore } from '../usage/exchanges.js'
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
  /** When the policy first refused one of the row's requests; null when never. */
  firstRefused: number | null
  /** oauth1: the application (consumer key) whose requests for `user` the row counts. */
  clientId?: string
}

/** A usage row of the lookback a plan counts, with what the moved rule needs. */
export interface PlanRow {
  user: string
  client: string
  /** The login-API site's api_key ('' for other methods). */
  clientId: string
  /** The login-API site's owner (null for other methods, or a site since deleted). */
  owner: string | null
  accepted: number
  lastSeen: number
  hasEmail: boolean
}

/** A modern (OAuth, OAuth 2.0, OpenID Connect) row for the moved rule; `owner` is an OpenID Connect client's registrant. */
export interface ModernRow {
  method: string
  user: string
  client: string
  lastSeen: number
  owner: string | null
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

/** A user or a user's client the plan leaves out (an exception in force when the change begins). */
export interface Excluded {
  /** Absent only for an oauth1 exception that names an application alone. */
  user?: string
  client?: string
  /** oauth1: the application (consumer key). */
  application?: string
}

const siteName = `left(s.name, ${maxClientLength})`
const appName = `left(c.name, ${maxClientLength})`

export class NoticeStore {
  constructor(private readonly db: Db) {}

  /**
   * The rows a change of `method` would touch: accepted requests seen since `since`, an
   * excluded user's (or user's client's) apart; for login_api with the site's owner.
   */
  async planRows(method: string, since: number, excluded: Excluded[]): Promise<PlanRow[]> {
    // oauth1: the application's owner, and their contact e-mail (they are the ones told).
    const oauth1 = method === 'oauth1'
    const rows = await this.db.query<{ user_id: string; client: string; client_id: string; owner: string | null; accepted: string | number; last_seen: Date | string; has_email: boolean }>(
      oauth1
        ? `SELECT a.user_id, a.client, a.client_id, c.owner_id AS owner, a.accepted, a.last_seen, (w.email IS NOT NULL) AS has_email
       FROM kigo_gateway.auth_usage a
       JOIN kigo_gateway.consumers c ON c.key = a.client_id
       LEFT JOIN kigo_gateway.users w ON w.id = c.owner_id
       WHERE a.method = 'oauth' AND $1::text = 'oauth1' AND a.last_seen >= $2 AND a.accepted > 0
         AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[], $5::text[]) AS e(user_id, client, application)
                         WHERE (e.user_id IS NULL OR e.user_id = a.user_id) AND (e.client IS NULL OR e.client = a.client) AND (e.application IS NULL OR e.application = a.client_id))`
        : `SELECT a.user_id, a.client, a.client_id, s.owner_id AS owner, a.accepted, a.last_seen, (w.email IS NOT NULL) AS has_email
       FROM kigo_gateway.auth_usage a
       LEFT JOIN kigo_gateway.login_sites s ON a.method = 'login_api' AND s.api_key = a.client_id
       LEFT JOIN kigo_gateway.users w ON w.id = a.user_id
       WHERE a.method = $1 AND a.last_seen >= $2 AND a.accepted > 0
         AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[], $5::text[]) AS e(user_id, client, application)
                         WHERE e.user_id = a.user_id AND (e.client IS NULL OR e.client = a.client))`,
      [method, iso(since), excluded.map((e) => e.user ?? null), excluded.map((e) => e.client ?? null), excluded.map((e) => e.application ?? null)],
    )
    return rows.map((r) => ({ user: r.user_id, client: r.client, clientId: r.client_id, owner: r.owner, accepted: Number(r.accepted), lastSeen: ms(r.last_seen), hasEmail: r.has_email === true }))
  }

  /**
   * The recipients whose rows of `method` were seen after `after` (and since `since`):
   * users, or for login_api the owners of the sites signed in to.
   */
  async changedRecipients(method: string, since: number, after: number): Promise<string[]> {
    const from = iso(Math.max(since, after))
    const rows = method === 'oauth1'
      ? await this.db.query<{ id: string }>(
        `SELECT DISTINCT c.owner_id AS id FROM kigo_gateway.consumers c
         WHERE c.key IN (SELECT DISTINCT client_id FROM kigo_gateway.auth_usage WHERE method = 'oauth' AND last_seen >= $1 AND (accepted > 0 OR refused_by_policy > 0))`,
        [from],
      )
      : method === 'login_api'
      ? await this.db.query<{ id: string }>(
        `SELECT DISTINCT s.owner_id AS id FROM kigo_gateway.login_sites s
         WHERE s.api_key IN (SELECT DISTINCT client_id FROM kigo_gateway.auth_usage WHERE method = 'login_api' AND last_seen >= $1 AND (accepted > 0 OR refused_by_policy > 0))`,
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
    type Row = { recipient: string; user_id: string; client: string; client_id?: string; accepted: string | number; refused_by_policy: string | number; first_seen: Date | string; last_seen: Date | string; first_refused: Date | string | null; deployment: Deployment }
    const rows = method === 'oauth1'
      // An application's owner is told about each of their applications, with every user whose token it used (one row per user).
      ? await this.db.query<Row>(
        `SELECT c.owner_id AS recipient, a.user_id, min(${appName}) AS client, c.key AS client_id, sum(a.accepted) AS accepted, sum(a.refused_by_policy) AS refused_by_policy,
                min(a.first_seen) AS first_seen, max(a.last_seen) AS last_seen, min(a.first_refused) AS first_refused,
                (array_agg(a.deployment ORDER BY a.last_seen DESC))[1] AS deployment
         FROM kigo_gateway.consumers c JOIN kigo_gateway.auth_usage a ON a.method = 'oauth' AND a.client_id = c.key
         WHERE c.owner_id = ANY($1::text[]) AND a.last_seen >= $2 AND (a.accepted > 0 OR a.refused_by_policy > 0)
         GROUP BY c.owner_id, c.key, a.user_id`,
        [recipients, iso(since)],
      )
      : method === 'login_api'
      // A site owner is told about their site as one client (by its name now): its sign-ins by every user.
      ? await this.db.query<Row>(
        `SELECT s.owner_id AS recipient, s.owner_id AS user_id, min(${siteName}) AS client, sum(a.accepted) AS accepted, sum(a.refused_by_policy) AS refused_by_policy,
                min(a.first_seen) AS first_seen, max(a.last_seen) AS last_seen, min(a.first_refused) AS first_refused,
                (array_agg(a.deployment ORDER BY a.last_seen DESC))[1] AS deployment
         FROM kigo_gateway.login_sites s JOIN kigo_gateway.auth_usage a ON a.method = 'login_api' AND a.client_id = s.api_key
         WHERE s.owner_id = ANY($1::text[]) AND a.last_seen >= $2 AND (a.accepted > 0 OR a.refused_by_policy > 0)
         GROUP BY s.owner_id, s.api_key`,
        [recipients, iso(since)],
      )
      : await this.db.query<Row>(
        `SELECT user_id AS recipient, user_id, client, accepted, refused_by_policy, first_seen, last_seen, first_refused, deployment FROM kigo_gateway.auth_usage
         WHERE method = $1 AND user_id = ANY($2::text[]) AND last_seen >= $3 AND (accepted > 0 OR refused_by_policy > 0)`,
        [method, recipients, iso(since)],
      )
    return rows.map((r) => ({
      recipient: r.recipient, user: r.user_id, client: r.client, accepted: Number(r.accepted), refusedByPolicy: Number(r.refused_by_policy),
      firstSeen: ms(r.first_seen), lastSeen: ms(r.last_seen), firstRefused: r.first_refused === null ? null : ms(r.first_refused),
      deployment: r.deployment === 'global' ? 'global' : 'domestic',
      ...(r.client_id !== undefined ? { clientId: r.client_id } : {}),
    }))
  }

  /**
   * oauth1: what the moved rule (usage/moved.ts oauth1Rule) reads of the given
   * applications: their oauth2 usage rows (which name the application by its consumer key)
   * and their tokens exchanged.
   */
  async oauth1Facts(applications: string[]): Promise<Oauth2Facts> {
    if (applications.length === 0) return { oauth2: [], exchanges: [] }
    const [oauth2, exchanges] = await Promise.all([
      this.db.query<{ client_id: string; user_id: string; last_seen: Date | string }>(
        `SELECT client_id, user_id, last_seen FROM kigo_gateway.auth_usage WHERE method = 'oauth2' AND client_id = ANY($1::text[]) AND accepted > 0`,
        [applications],
      ),
      new Oauth1ExchangeStore(this.db).forApplications(applications),
    ])
    return {
      oauth2: oauth2.map((r) => ({ application: r.client_id, user: r.user_id, lastSeen: ms(r.last_seen) })),
      exchanges: exchanges.map((e) => ({ application: e.consumerKey, user: e.userId, exchangedAt: e.exchangedAt })),
    }
  }

  /** The OAuth 1.0a applications `user` authorized (an unrevoked access token), by name. */
  async authorizedApplications(user: string): Promise<Array<{ key: string; name: string }>> {
    return this.db.query<{ key: string; name: string }>(
      `SELECT DISTINCT c.key, c.name FROM kigo_gateway.access_tokens t JOIN kigo_gateway.consumers c ON c.key = t.consumer_key
       WHERE t.user_id = $1 AND t.revoked_at IS NULL ORDER BY c.name, c.key`,
      [user],
    )
  }

  /**
   * Modern rows for the moved rule (usage/moved.ts): the users' own (basic, wsse), or for
   * login-API sites' owners the rows of their own OpenID Connect clients, whoever signed in.
   */
  async modernRows(method: string, users: string[]): Promise<ModernRow[]> {
    if (users.length === 0) return []
    const rows = method === 'login_api'
      ? await this.db.query<{ method: string; user_id: string; client: string; last_seen: Date | string; owner: string | null }>(
        `SELECT a.method, a.user_id, a.client, a.last_seen, c.owner_id AS owner
         FROM kigo_gateway.oidc_clients c JOIN kigo_gateway.auth_usage a ON a.method = 'oidc' AND a.client_id = c.client_id
         WHERE c.owner_id = ANY($1::text[])`,
        [users],
      )
      : await this.db.query<{ method: string; user_id: string; client: string; last_seen: Date | string; owner: string | null }>(
        `SELECT method, user_id, client, last_seen, NULL AS owner FROM kigo_gateway.auth_usage WHERE method = ANY($2::text[]) AND user_id = ANY($1::text[])`,
        [users, modernMethods],
      )
    return rows.map((r) => ({ method: r.method, user: r.user_id, client: r.client, lastSeen: ms(r.last_seen), owner: r.owner }))
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

  /** When each recipient was first told of each method (the funnel counts from there). */
  async firstTold(): Promise<Array<{ user: string; method: string; toldAt: number }>> {
    const rows = await this.db.query<{ user_id: string; method: string; told_at: Date | string }>(
      'SELECT user_id, method, min(created_at) AS told_at FROM kigo_gateway.notices GROUP BY user_id, method ORDER BY method, user_id',
    )
    return rows.map((r) => ({ user: r.user_id, method: r.method, toldAt: ms(r.told_at) }))
  }
}
