// Which endpoints each legacy client called, and when last (the account page's "which
// tool is this?", docs/gateway.md#migration-notices). The usage report keeps counts per
// (method, user, client) but no endpoint, so this keeps, per (method, user, client), the
// last few operations (route-table names, a closed set) with when each was last called.
// Like an application's last use (usage/latest-times.ts), a request only notes it in
// memory; a timer writes the batch in one transaction and trims each client to its newest
// `keep`.
import type { Db } from '../../common/sql.js'
import { LatestTimes } from '../usage/latest-times.js'
import type { ObservedDecision } from '../usage/recorder.js'

export interface EndpointUse {
  endpoint: string
  lastSeen: number
}

interface Pending {
  method: string
  user: string
  client: string
  endpoint: string
  at: number
}

const iso = (ms: number) => new Date(ms).toISOString()

export class EndpointStore {
  constructor(private readonly db: Db, private readonly keep = 5) {}

  /** Moves each row's last call forward (never back), then keeps each client's newest `keep`. */
  async touch(rows: Pending[]): Promise<void> {
    if (rows.length === 0) return
    const sorted = [...rows].sort((a, b) => cmp(a.method, b.method) || cmp(a.user, b.user) || cmp(a.client, b.client) || cmp(a.endpoint, b.endpoint))
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO kigo_gateway.usage_endpoints AS e (method, user_id, client, endpoint, last_seen)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
         ON CONFLICT (method, user_id, client, endpoint) DO UPDATE SET last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen)`,
        [sorted.map((r) => r.method), sorted.map((r) => r.user), sorted.map((r) => r.client), sorted.map((r) => r.endpoint), sorted.map((r) => iso(r.at))],
      )
      const keys = [...new Map(sorted.map((r) => [`${r.method}\n${r.user}\n${r.client}`, r] as const)).values()]
      await tx.query(
        `DELETE FROM kigo_gateway.usage_endpoints d USING (
           SELECT e.method, e.user_id, e.client, e.endpoint,
                  row_number() OVER (PARTITION BY e.method, e.user_id, e.client ORDER BY e.last_seen DESC, e.endpoint) AS n
           FROM kigo_gateway.usage_endpoints e
           JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(method, user_id, client) ON e.method = k.method AND e.user_id = k.user_id AND e.client = k.client
         ) r
         WHERE r.n > $4 AND d.method = r.method AND d.user_id = r.user_id AND d.client = r.client AND d.endpoint = r.endpoint`,
        [keys.map((k) => k.method), keys.map((k) => k.user), keys.map((k) => k.client), this.keep],
      )
    })
  }

  /** The user's endpoints per (method, client), newest first. */
  async forUser(user: string): Promise<Map<string, EndpointUse[]>> {
    const rows = await this.db.query<{ method: string; client: string; endpoint: string; last_seen: Date | string }>(
      'SELECT method, client, endpoint, last_seen FROM kigo_gateway.usage_endpoints WHERE user_id = $1 ORDER BY last_seen DESC, endpoint',
      [user],
    )
    const out = new Map<string, EndpointUse[]>()
    for (const r of rows) {
      const k = endpointKey(r.method, r.client)
      if (!out.has(k)) out.set(k, [])
      out.get(k)!.push({ endpoint: r.endpoint, lastSeen: new Date(r.last_seen).getTime() })
    }
    return out
  }
}

export const endpointKey = (method: string, client: string) => `${method}\n${client}`

/** Notes accepted Basic and WSSE requests' endpoints in memory; a timer writes them. */
export class EndpointRecorder {
  private readonly times: LatestTimes<Pending>

  constructor(store: EndpointStore, options: { flushMs?: number; maxKeys?: number; onFlushError?: (err: unknown) => void } = {}) {
    this.times = new LatestTimes((r) => `${r.method}\n${r.user}\n${r.client}\n${r.endpoint}`, (rows) => store.touch(rows), options)
  }

  start(): void {
    this.times.start()
  }

  observe(decision: ObservedDecision, client: () => string, now: number, endpoint: string | undefined): void {
    if (!decision.ok || (decision.method !== 'basic' && decision.method !== 'wsse') || endpoint === undefined || endpoint === '') return
    const user = decision.identity?.user
    if (user === undefined) return
    this.times.note({ method: decision.method, user, client: client(), endpoint, at: now })
  }

  flush(): Promise<void> {
    return this.times.flush()
  }

  close(): Promise<void> {
    return this.times.close()
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
