// Usage collection off the request path (docs/gateway.md#the-usage-report): a request only bumps counters in
// memory; a timer (default every 5 s) adds them to the shared store in one batch, so the
// report is current within 15 s. A failed flush keeps the counts for the next one; on
// shutdown the last counts are flushed.
import type { AuthMethod } from '../../common/identity.js'
import type { Deployment } from '../../common/deployment.js'
import type { Outcome } from '../domain/auth.js'
import type { MinuteRow, UsageOutcomes, UsageRow, UsageStore } from './store.js'

/** The part of an authentication decision the recorder looks at. */
export interface ObservedDecision {
  ok: boolean
  /** The request's credential method, or the login API and OpenID Connect (which count their own sign-ins and exchanges). */
  method: AuthMethod | 'oauth2' | 'login_api' | 'oidc' | 'none'
  outcome: Outcome
  identity?: { user: string } | null
  user?: string
  /** The login-API site's api_key or the OpenID Connect client's client_id (kept apart from others of the same name). */
  clientId?: string
}

export interface UsageRecorderOptions {
  /** Flush interval; default 5000 ms. */
  flushMs?: number
  /** Most distinct (method, user, client) keys held between flushes; default 100,000. */
  maxKeys?: number
  now?: () => number
  onFlushError?: (err: unknown) => void
  /** Per-minute counts older than this are pruned (hourly); default 8 days. */
  retainMinutesMs?: number
  /** Report rows last seen longer ago than this are pruned (hourly); default 400 days. */
  retainRowsMs?: number
}

/** Which outcome column an authentication outcome adds to (docs/gateway.md#the-usage-report). */
function outcomeColumn(outcome: Outcome): keyof UsageOutcomes | null {
  switch (outcome) {
    case 'ok':
      return 'accepted'
    case 'policy_denied':
      return 'refusedByPolicy'
    case 'throttled':
      return 'throttled'
    case 'unavailable':
      // Not the client's doing, and no credential was judged: not part of the report.
      return null
    default:
      return 'failedCredentials'
  }
}

const minuteMs = 60_000

/** Adds a minute's counts to `into`, keyed by minute and method. */
function addMinute(into: Map<string, MinuteRow>, m: MinuteRow): void {
  const key = `${m.minute} ${m.method}`
  const cur = into.get(key)
  if (cur) {
    cur.count += m.count
    cur.accepted += m.accepted
  } else into.set(key, { ...m })
}
const hourMs = 3_600_000

export class UsageRecorder {
  private rows = new Map<string, UsageRow>()
  /** Per-minute counts of minutes no longer current (and of a flush that failed), by `minute method`. */
  private minutes = new Map<string, MinuteRow>()
  /** The current minute's counts, one row per method held: a request adds to its method's row, no key built. */
  private minute = -Infinity
  private minuteRows = new Map<ObservedDecision['method'], MinuteRow>()
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> | null = null
  private lastPrune = 0
  /** Keys not recorded because the pending set was full (store away too long). */
  dropped = 0

  constructor(private readonly store: UsageStore, private readonly options: UsageRecorderOptions = {}) {}

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch((err) => this.options.onFlushError?.(err))
    }, this.options.flushMs ?? 5000)
    this.timer.unref()
  }

  /**
   * Counts one request. Every request counts towards the per-minute counts by its
   * credential method (accepted ones apart, for the chart); one that names a user (verified,
   * or claimed by a credential that failed or was throttled) counts towards the report
   * under `client()`, in the column of its outcome, with the deployment (default domestic)
   * of the row's latest request. `_endpoint` (the operation) is for the observers beside
   * this one (notices/endpoints.ts); the report keeps none.
   */
  observe(decision: ObservedDecision, client: () => string, now: number, _endpoint?: string, deployment: Deployment = 'domestic'): void {
    const accepted = decision.ok ? 1 : 0
    if (now - this.minute >= minuteMs || now < this.minute) this.turnMinute(Math.floor(now / minuteMs) * minuteMs)
    const m = this.minuteRows.get(decision.method)
    if (m) {
      m.count += 1
      m.accepted += accepted
    } else this.minuteRows.set(decision.method, { minute: this.minute, method: decision.method, count: 1, accepted })

    if (decision.method === 'none') return
    const column = outcomeColumn(decision.outcome)
    const user = decision.ok ? decision.identity?.user : decision.user
    if (user === undefined || user === '' || column === null) return
    const name = client()
    const id = decision.clientId
    const key = id === undefined ? `${decision.method}\n${user}\n${name}` : `${decision.method}\n${user}\n${name}\n${id}`
    const row = this.rows.get(key)
    if (row) {
      row.count += 1
      row[column] += 1
      if (now < row.firstSeen) row.firstSeen = now
      if (now >= row.lastSeen) {
        row.lastSeen = now
        row.deployment = deployment
      }
      if (column === 'refusedByPolicy' && (row.firstRefused == null || now < row.firstRefused)) row.firstRefused = now
    } else if (this.rows.size < (this.options.maxKeys ?? 100_000)) {
      const fresh: UsageRow = { method: decision.method, user, client: name, count: 1, accepted: 0, refusedByPolicy: 0, failedCredentials: 0, throttled: 0, firstSeen: now, lastSeen: now, deployment }
      fresh[column] = 1
      if (id !== undefined) fresh.clientId = id
      if (column === 'refusedByPolicy') fresh.firstRefused = now
      this.rows.set(key, fresh)
    } else {
      this.dropped += 1
    }
  }

  /** Sets the held rows of the minute that ended aside for the next flush, and holds `minute`'s. */
  private turnMinute(minute: number): void {
    this.closeMinute()
    this.minute = minute
  }

  /** Moves the held minute's rows into the pending per-minute counts (merged with any of the same minute). */
  private closeMinute(): void {
    for (const m of this.minuteRows.values()) addMinute(this.minutes, m)
    this.minuteRows = new Map()
  }

  /** Writes the pending counts; concurrent calls share one write. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = null
    })
    return this.flushing
  }

  private async write(): Promise<void> {
    this.closeMinute()
    const rows = this.rows
    const minutes = this.minutes
    this.rows = new Map()
    this.minutes = new Map()
    try {
      await this.store.add([...rows.values()], [...minutes.values()])
    } catch (err) {
      this.restore(rows, minutes)
      throw err
    }
    const now = (this.options.now ?? Date.now)()
    if (now - this.lastPrune > hourMs) {
      this.lastPrune = now
      await this.store.pruneMinutes(now - (this.options.retainMinutesMs ?? 8 * 24 * hourMs)).catch(() => undefined)
      await this.store.pruneRows(now - (this.options.retainRowsMs ?? 400 * 24 * hourMs)).catch(() => undefined)
    }
  }

  /** Puts counts that could not be written back, merged with those recorded meanwhile. */
  private restore(rows: Map<string, UsageRow>, minutes: Map<string, MinuteRow>): void {
    for (const [key, r] of rows) {
      const cur = this.rows.get(key)
      if (cur) {
        cur.count += r.count
        cur.accepted += r.accepted
        cur.refusedByPolicy += r.refusedByPolicy
        cur.failedCredentials += r.failedCredentials
        cur.throttled += r.throttled
        cur.firstSeen = Math.min(cur.firstSeen, r.firstSeen)
        if (r.lastSeen > cur.lastSeen) cur.deployment = r.deployment
        cur.lastSeen = Math.max(cur.lastSeen, r.lastSeen)
        if (r.firstRefused != null && (cur.firstRefused == null || r.firstRefused < cur.firstRefused)) cur.firstRefused = r.firstRefused
      } else if (this.rows.size < (this.options.maxKeys ?? 100_000)) this.rows.set(key, r)
      else this.dropped += 1
    }
    for (const m of minutes.values()) addMinute(this.minutes, m)
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush()
  }
}
