// The legacy-usage report (docs/gateway.md#the-usage-report) and the per-minute request counts behind the
// dashboard chart (docs/gateway.md#the-operator-api-and-dashboard), in the gateway's store (migration 11) so that every gateway
// adds to the same rows. Writes are batched upserts that add counts; rows are written in
// key order so that two gateways flushing at once never deadlock.
import type { Db } from '../../common/sql.js'
import type { Deployment } from '../../common/deployment.js'
import { Oauth1ExchangeStore, type Oauth1Exchange } from './exchanges.js'

/** What became of the attempts of a row (they add up to its count). */
export interface UsageOutcomes {
  accepted: number
  refusedByPolicy: number
  /** Credentials that did not verify (wrong secret, stale, replayed, malformed) or lacked the scope. */
  failedCredentials: number
  throttled: number
}

export interface UsageRow extends UsageOutcomes {
  method: string
  user: string
  client: string
  /**
   * The identity of the login-API site (api_key) or OpenID Connect client (client_id) the
   * row counts; '' (or absent) for every other method. Part of the row's key.
   */
  clientId?: string
  count: number
  firstSeen: number
  lastSeen: number
  /** The deployment of the row's latest request (migration 38); domestic when not given. */
  deployment?: Deployment
  /** When the policy first refused a request of the row; null (or absent) when never. */
  firstRefused?: number | null
}

/** A row as read back: with its identity and, for a site or an OpenID Connect client, its owner. */
export interface StoredUsageRow extends UsageRow {
  clientId: string
  firstRefused: number | null
  /** The user who registered the row's login-API site or OpenID Connect client; null for other methods, or when it is gone. */
  owner: string | null
}

export interface MinuteRow {
  /** Start of the minute, ms since the epoch. */
  minute: number
  method: string
  /** Every request of the minute with this method… */
  count: number
  /** …and those accepted (the chart shows these). */
  accepted: number
}

export interface UsageStoreOptions {
  /** Distinct clients kept per (method, user); the rest are added to one row. Default 20. */
  maxClientsPerUser?: number
}

/**
 * The client of the row that holds a user's clients beyond the bound, and the user of the
 * row that holds failed attempts naming no existing user (so an attacker inventing user
 * IDs or User-Agents cannot make rows without end). Neither can be a user ID.
 */
export const otherClients = '(other clients)'
export const unknownUsers = '(unknown users)'

export interface UsageFilter {
  method?: string
  user?: string
  /** Only records seen at or after this instant (ms). */
  since?: number
  limit?: number
}

/** Rows per statement: keeps parameters and lock sets small. */
const chunk = 500

const iso = (ms: number) => new Date(ms).toISOString()

export class UsageStore {
  readonly maxClientsPerUser: number

  constructor(
    private readonly db: Db,
    options: UsageStoreOptions = {},
  ) {
    this.maxClientsPerUser = options.maxClientsPerUser ?? 20
  }

  /**
   * Rows whose client would exceed the bound of their (method, user) are given the client
   * `otherClients` (the clients already stored count first, then the batch in key order).
   * Two gateways flushing at once may each add a client: the bound holds within a few.
   */
  private async boundClients(tx: { query: Db['query'] }, rows: UsageRow[]): Promise<UsageRow[]> {
    const owners = [...new Map(rows.map((r) => [`${r.method}\n${r.user}`, r] as const)).values()]
    const stored = await tx.query<{ method: string; user_id: string; client: string }>(
      `SELECT u.method, u.user_id, u.client FROM kigo_gateway.auth_usage u
       JOIN unnest($1::text[], $2::text[]) AS o(method, user_id) ON u.method = o.method AND u.user_id = o.user_id`,
      [owners.map((r) => r.method), owners.map((r) => r.user)],
    )
    const clients = new Map<string, Set<string>>()
    for (const s of stored) {
      const key = `${s.method}\n${s.user_id}`
      if (!clients.has(key)) clients.set(key, new Set())
      clients.get(key)!.add(s.client)
    }
    return rows.map((r) => {
      const key = `${r.method}\n${r.user}`
      const known = clients.get(key) ?? new Set<string>()
      clients.set(key, known)
      if (known.has(r.client)) return r
      const distinct = known.size - (known.has(otherClients) ? 1 : 0)
      if (distinct < this.maxClientsPerUser) {
        known.add(r.client)
        return r
      }
      known.add(otherClients)
      return { ...r, client: otherClients, clientId: '' }
    })
  }

  /** Adds the counts of `rows` (one per key) to the stored ones, in one transaction. */
  async add(rows: UsageRow[], minutes: MinuteRow[]): Promise<void> {
    if (rows.length === 0 && minutes.length === 0) return
    const sortedRows = [...rows].sort((a, b) => cmp(a.method, b.method) || cmp(a.user, b.user) || cmp(a.client, b.client) || cmp(a.clientId ?? '', b.clientId ?? ''))
    const sortedMinutes = [...minutes].sort((a, b) => a.minute - b.minute || cmp(a.method, b.method))
    await this.db.transaction(async (tx) => {
      for (let i = 0; i < sortedRows.length; i += chunk) {
        const part = await this.boundClients(tx, sortedRows.slice(i, i + chunk))
        // A row with nothing accepted or refused by the policy names a user only by the
        // credential's claim: it is kept under that user only when the user exists.
        // Rows that end up with the same key are added together (GROUP BY) first.
        await tx.query(
          `INSERT INTO kigo_gateway.auth_usage AS u (method, user_id, client, client_id, count, accepted, refused_by_policy, failed_credentials, throttled, first_seen, last_seen, first_refused, deployment)
           SELECT method, user_id, client, client_id, sum(count), sum(accepted), sum(refused_by_policy), sum(failed_credentials), sum(throttled), min(first_seen), max(last_seen), min(first_refused),
                  (array_agg(deployment ORDER BY last_seen DESC))[1]
           FROM (
             SELECT r.method,
                    CASE WHEN r.claimed THEN r.user_id ELSE '${unknownUsers}' END AS user_id,
                    CASE WHEN r.claimed THEN r.client ELSE '' END AS client,
                    CASE WHEN r.claimed THEN r.client_id ELSE '' END AS client_id,
                    r.count, r.accepted, r.refused_by_policy, r.failed_credentials, r.throttled, r.first_seen, r.last_seen, r.first_refused, r.deployment
             FROM (
               SELECT x.*, (x.accepted > 0 OR x.refused_by_policy > 0 OR EXISTS (SELECT 1 FROM kigo_gateway.users w WHERE w.id = x.user_id)) AS claimed
               FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::timestamptz[], $13::text[])
                 AS x(method, user_id, client, count, accepted, refused_by_policy, failed_credentials, throttled, first_seen, last_seen, client_id, first_refused, deployment)
             ) r
           ) t
           GROUP BY method, user_id, client, client_id
           ORDER BY method, user_id, client, client_id
           ON CONFLICT (method, user_id, client, client_id) DO UPDATE SET
             count = u.count + EXCLUDED.count,
             accepted = u.accepted + EXCLUDED.accepted,
             refused_by_policy = u.refused_by_policy + EXCLUDED.refused_by_policy,
             failed_credentials = u.failed_credentials + EXCLUDED.failed_credentials,
             throttled = u.throttled + EXCLUDED.throttled,
             first_seen = LEAST(u.first_seen, EXCLUDED.first_seen),
             last_seen = GREATEST(u.last_seen, EXCLUDED.last_seen),
             first_refused = LEAST(u.first_refused, EXCLUDED.first_refused),
             deployment = CASE WHEN EXCLUDED.last_seen >= u.last_seen THEN EXCLUDED.deployment ELSE u.deployment END`,
          [
            part.map((r) => r.method), part.map((r) => r.user), part.map((r) => r.client), part.map((r) => r.count),
            part.map((r) => r.accepted), part.map((r) => r.refusedByPolicy), part.map((r) => r.failedCredentials), part.map((r) => r.throttled),
            part.map((r) => iso(r.firstSeen)), part.map((r) => iso(r.lastSeen)),
            part.map((r) => r.clientId ?? ''), part.map((r) => (r.firstRefused == null ? null : iso(r.firstRefused))), part.map((r) => r.deployment ?? 'domestic'),
          ],
        )
      }
      for (let i = 0; i < sortedMinutes.length; i += chunk) {
        const part = sortedMinutes.slice(i, i + chunk)
        await tx.query(
          `INSERT INTO kigo_gateway.auth_requests_per_minute AS m (minute, method, count, accepted)
           SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::bigint[], $4::bigint[])
           ON CONFLICT (minute, method) DO UPDATE SET count = m.count + EXCLUDED.count, accepted = m.accepted + EXCLUDED.accepted`,
          [part.map((r) => iso(r.minute)), part.map((r) => r.method), part.map((r) => r.count), part.map((r) => r.accepted)],
        )
      }
    })
  }

  /** The report, most recently seen first. */
  async list(filter: UsageFilter = {}): Promise<StoredUsageRow[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.method !== undefined) where.push(`a.method = $${params.push(filter.method)}`)
    if (filter.user !== undefined) where.push(`a.user_id = $${params.push(filter.user)}`)
    if (filter.since !== undefined) where.push(`a.last_seen >= $${params.push(iso(filter.since))}`)
    const limit = `LIMIT $${params.push(filter.limit ?? 10_000)}`
    const rows = await this.db.query<StoredRowColumns>(
      `SELECT ${storedRowColumns} FROM ${storedRowSource}
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY a.last_seen DESC, a.method, a.user_id, a.client ${limit}`,
      params,
    )
    return rows.map(storedRow)
  }

  /** The OAuth 1.0a tokens of the given applications exchanged for OAuth 2.0 (the oauth1 moved rule, moved.ts). */
  oauth1Exchanges(consumerKeys: string[]): Promise<Oauth1Exchange[]> {
    return new Oauth1ExchangeStore(this.db).forApplications(consumerKeys)
  }

  /** Per-minute counts per method in [from, to). */
  async minutes(from: number, to: number): Promise<MinuteRow[]> {
    const rows = await this.db.query<{ minute: Date | string; method: string; count: string | number; accepted: string | number }>(
      `SELECT minute, method, count, accepted FROM kigo_gateway.auth_requests_per_minute WHERE minute >= $1 AND minute < $2 ORDER BY minute, method`,
      [iso(from), iso(to)],
    )
    return rows.map((r) => ({ minute: new Date(r.minute).getTime(), method: r.method, count: Number(r.count), accepted: Number(r.accepted) }))
  }

  /** Drops per-minute counts older than `before` (the chart shows at most a week). */
  async pruneMinutes(before: number): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.auth_requests_per_minute WHERE minute < $1', [iso(before)])
  }

  /** Drops report rows last seen before `before` (the configured retention). */
  async pruneRows(before: number): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.auth_usage WHERE last_seen < $1', [iso(before)])
  }
}

/** The columns of a stored row, its site's or client's owner included (`a` the usage row). */
export const storedRowColumns = `a.method, a.user_id, a.client, a.client_id, a.count, a.accepted, a.refused_by_policy, a.failed_credentials, a.throttled, a.first_seen, a.last_seen, a.first_refused,
  CASE a.method WHEN 'login_api' THEN (SELECT s.owner_id FROM kigo_gateway.login_sites s WHERE s.api_key = a.client_id)
                WHEN 'oidc' THEN (SELECT c.owner_id FROM kigo_gateway.oidc_clients c WHERE c.client_id = a.client_id) END AS owner`
export const storedRowSource = 'kigo_gateway.auth_usage a'

type Count = string | number
type Instant = Date | string
export interface StoredRowColumns { method: string; user_id: string; client: string; client_id: string; count: Count; accepted: Count; refused_by_policy: Count; failed_credentials: Count; throttled: Count; first_seen: Instant; last_seen: Instant; first_refused: Instant | null; owner: string | null }

export function storedRow(r: StoredRowColumns): StoredUsageRow {
  return {
    method: r.method,
    user: r.user_id,
    client: r.client,
    clientId: r.client_id,
    count: Number(r.count),
    accepted: Number(r.accepted),
    refusedByPolicy: Number(r.refused_by_policy),
    failedCredentials: Number(r.failed_credentials),
    throttled: Number(r.throttled),
    firstSeen: new Date(r.first_seen).getTime(),
    lastSeen: new Date(r.last_seen).getTime(),
    firstRefused: r.first_refused === null ? null : new Date(r.first_refused).getTime(),
    owner: r.owner,
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
