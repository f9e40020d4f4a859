// The legacy-usage report (SPEC §6.3) and the per-minute request counts behind the
// dashboard chart (SPEC §6.4), in the gateway's store (migration 11) so that every gateway
// adds to the same rows. Writes are batched upserts that add counts; rows are written in
// key order so that two gateways flushing at once never deadlock.
import type { Db } from '../../common/sql.js'

export interface UsageRow {
  method: string
  user: string
  client: string
  count: number
  firstSeen: number
  lastSeen: number
}

export interface MinuteRow {
  /** Start of the minute, ms since the epoch. */
  minute: number
  method: string
  count: number
}

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
  constructor(private readonly db: Db) {}

  /** Adds the counts of `rows` (one per key) to the stored ones, in one transaction. */
  async add(rows: UsageRow[], minutes: MinuteRow[]): Promise<void> {
    if (rows.length === 0 && minutes.length === 0) return
    const sortedRows = [...rows].sort((a, b) => cmp(a.method, b.method) || cmp(a.user, b.user) || cmp(a.client, b.client))
    const sortedMinutes = [...minutes].sort((a, b) => a.minute - b.minute || cmp(a.method, b.method))
    await this.db.transaction(async (tx) => {
      for (let i = 0; i < sortedRows.length; i += chunk) {
        const part = sortedRows.slice(i, i + chunk)
        await tx.query(
          `INSERT INTO kigo_gateway.auth_usage AS u (method, user_id, client, count, first_seen, last_seen)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[], $6::timestamptz[])
           ON CONFLICT (method, user_id, client) DO UPDATE SET
             count = u.count + EXCLUDED.count,
             first_seen = LEAST(u.first_seen, EXCLUDED.first_seen),
             last_seen = GREATEST(u.last_seen, EXCLUDED.last_seen)`,
          [part.map((r) => r.method), part.map((r) => r.user), part.map((r) => r.client), part.map((r) => r.count), part.map((r) => iso(r.firstSeen)), part.map((r) => iso(r.lastSeen))],
        )
      }
      for (let i = 0; i < sortedMinutes.length; i += chunk) {
        const part = sortedMinutes.slice(i, i + chunk)
        await tx.query(
          `INSERT INTO kigo_gateway.auth_requests_per_minute AS m (minute, method, count)
           SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::bigint[])
           ON CONFLICT (minute, method) DO UPDATE SET count = m.count + EXCLUDED.count`,
          [part.map((r) => iso(r.minute)), part.map((r) => r.method), part.map((r) => r.count)],
        )
      }
    })
  }

  /** The report, most recently seen first. */
  async list(filter: UsageFilter = {}): Promise<UsageRow[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.method !== undefined) where.push(`method = $${params.push(filter.method)}`)
    if (filter.user !== undefined) where.push(`user_id = $${params.push(filter.user)}`)
    if (filter.since !== undefined) where.push(`last_seen >= $${params.push(iso(filter.since))}`)
    const limit = `LIMIT $${params.push(filter.limit ?? 10_000)}`
    const rows = await this.db.query<{ method: string; user_id: string; client: string; count: string | number; first_seen: Date | string; last_seen: Date | string }>(
      `SELECT method, user_id, client, count, first_seen, last_seen FROM kigo_gateway.auth_usage
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY last_seen DESC, method, user_id, client ${limit}`,
      params,
    )
    return rows.map((r) => ({
      method: r.method,
      user: r.user_id,
      client: r.client,
      count: Number(r.count),
      firstSeen: new Date(r.first_seen).getTime(),
      lastSeen: new Date(r.last_seen).getTime(),
    }))
  }

  /** Per-minute counts per method in [from, to). */
  async minutes(from: number, to: number): Promise<MinuteRow[]> {
    const rows = await this.db.query<{ minute: Date | string; method: string; count: string | number }>(
      `SELECT minute, method, count FROM kigo_gateway.auth_requests_per_minute WHERE minute >= $1 AND minute < $2 ORDER BY minute, method`,
      [iso(from), iso(to)],
    )
    return rows.map((r) => ({ minute: new Date(r.minute).getTime(), method: r.method, count: Number(r.count) }))
  }

  /** Drops per-minute counts older than `before` (the chart shows at most a week). */
  async pruneMinutes(before: number): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.auth_requests_per_minute WHERE minute < $1', [iso(before)])
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
