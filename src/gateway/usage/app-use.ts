// When each authorized application last acted for its user (the account page's
// "last used"). Like the usage report (recorder.ts), a request only notes the time in
// memory; a timer writes the latest instants in one statement, so an OAuth request costs
// no database write. Kept per (user, consumer): the pair the account page lists and revokes.
import type { Db } from '../../common/sql.js'
import { LatestTimes } from './latest-times.js'
import type { ObservedDecision } from './recorder.js'

export class AppUseStore {
  constructor(private readonly db: Db) {}

  /** Moves each pair's last use forward to the given instant (never back). */
  async touch(rows: Array<{ user: string; consumer: string; at: number }>): Promise<void> {
    if (rows.length === 0) return
    const sorted = [...rows].sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0))
    await this.db.query(
      `INSERT INTO kigo_gateway.app_last_used AS a (user_id, consumer_key, last_used)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
       ON CONFLICT (user_id, consumer_key) DO UPDATE SET last_used = GREATEST(a.last_used, EXCLUDED.last_used)`,
      [sorted.map((r) => r.user), sorted.map((r) => r.consumer), sorted.map((r) => new Date(r.at).toISOString())],
    )
  }

  /** The user's applications and when each last acted for them (ms), by consumer key. */
  async forUser(userId: string): Promise<Map<string, number>> {
    const rows = await this.db.query<{ consumer_key: string; last_used: Date | string }>(
      'SELECT consumer_key, last_used FROM kigo_gateway.app_last_used WHERE user_id = $1',
      [userId],
    )
    return new Map(rows.map((r) => [r.consumer_key, new Date(r.last_used).getTime()]))
  }
}

export class AppUseRecorder {
  private readonly times: LatestTimes<{ user: string; consumer: string; at: number }>

  constructor(store: AppUseStore, options: { flushMs?: number; maxKeys?: number; onFlushError?: (err: unknown) => void } = {}) {
    this.times = new LatestTimes((r) => `${r.user}\n${r.consumer}`, (rows) => store.touch(rows), options)
  }

  start(): void {
    this.times.start()
  }

  /** Notes a verified OAuth request (its consumer acted for its user at `now`). */
  observe(decision: ObservedDecision & { identity?: { user: string; consumer?: string } | null }, now: number): void {
    if (!decision.ok || decision.method !== 'oauth' || !decision.identity?.consumer) return
    this.times.note({ user: decision.identity.user, consumer: decision.identity.consumer, at: now })
  }

  flush(): Promise<void> {
    return this.times.flush()
  }

  close(): Promise<void> {
    return this.times.close()
  }
}
