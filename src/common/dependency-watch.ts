// Outage lines an operator can read (docs/operations.md#what-an-outage-looks-like): while PostgreSQL, Redis or
// the core is away, every request that needed it fails the same way, and a line per
// request (with a stack trace) would bury everything else. A watch logs one warn line when
// the outage starts (the first failure after success) and one when it ends (the first
// success after it, with its duration); while it lasts, a probe every second notices the
// end even when no request comes. Requests refused meanwhile say so in their own request
// line (status 503), nothing more.

export interface WatchLogger {
  warn(obj: object, msg: string): void
}

export interface DependencyWatchOptions {
  /** Asked every `probeMs` while the dependency is down; resolving means it is back. */
  probe?: () => Promise<unknown>
  probeMs?: number
  now?: () => number
}

/** What a caller tells a watch: when its call began (`mark`; a stand-in may lack it) and how it went. */
export type WatchedCalls = Pick<DependencyWatch, 'failed' | 'succeeded'> & Partial<Pick<DependencyWatch, 'mark'>>

export class DependencyWatch {
  /** When the current outage started (ms), or null while the dependency answers. */
  #downSince: number | null = null
  /** Outages started so far: which one a probe belongs to. */
  #outages = 0
  #probeTimer: NodeJS.Timeout | undefined
  #closed = false
  /** Where the lines go; set once the process's logger exists (the core makes it late). */
  logger: WatchLogger | undefined

  constructor(
    /** What the lines call it: postgres, redis, core. */
    readonly dependency: string,
    logger: WatchLogger | undefined,
    private readonly options: DependencyWatchOptions = {},
  ) {
    this.logger = logger
  }

  get down(): boolean {
    return this.#downSince !== null
  }

  /** A call to the dependency failed for want of it (not a refusal of the request itself). */
  failed(err: unknown): void {
    if (this.#downSince !== null || this.#closed) return
    this.#downSince = this.#now()
    this.#outages += 1
    const e = err as { message?: unknown; code?: unknown } | null
    this.logger?.warn(
      { dependency: this.dependency, error: typeof e?.message === 'string' ? e.message : String(err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) },
      `${this.dependency} outage started`,
    )
    this.#scheduleProbe()
  }

  /** The watch's clock: when a call begins, for `succeeded`. */
  mark(): number {
    return this.#now()
  }

  /**
   * A call to the dependency succeeded. One that began before the outage started (`began`,
   * from `mark`) proves nothing about now: its answer may have been on its way already.
   */
  succeeded(began?: number): void {
    if (this.#downSince === null) return
    if (began !== undefined && began < this.#downSince) return
    const durationMs = this.#now() - this.#downSince
    this.#downSince = null
    clearTimeout(this.#probeTimer)
    this.logger?.warn({ dependency: this.dependency, durationMs, durationSeconds: Math.round(durationMs / 100) / 10 }, `${this.dependency} outage ended`)
  }

  /**
   * The next probe of the current outage. A probe is a call like any other: one asked during
   * an earlier outage that answers after this one started ends nothing (`succeeded` with its
   * mark), and one that fails after its outage ended schedules nothing (the outage now
   * going, if any, has its own).
   */
  #scheduleProbe(): void {
    const probe = this.options.probe
    if (!probe || this.#closed) return
    const outage = this.#outages
    clearTimeout(this.#probeTimer)
    this.#probeTimer = setTimeout(() => {
      if (this.#downSince === null || this.#outages !== outage) return
      const began = this.mark()
      Promise.resolve()
        .then(probe)
        .then(
          () => this.succeeded(began),
          () => {
            if (this.#downSince !== null && this.#outages === outage) this.#scheduleProbe()
          },
        )
    }, this.options.probeMs ?? 1000)
    this.#probeTimer.unref()
  }

  #now(): number {
    return (this.options.now ?? Date.now)()
  }

  close(): void {
    this.#closed = true
    clearTimeout(this.#probeTimer)
  }
}
