// Latest instants noted in memory and written in batches by a timer (the account page's
// "last used" of an application, usage/app-use.ts; the last endpoints of a legacy client,
// notices/endpoints.ts): a request only moves an instant forward in a map; the timer
// writes the map in one call. A failed write keeps its rows for the next one, unless newer
// instants arrived meanwhile; at most `maxKeys` rows wait (default 100,000).
export class LatestTimes<R extends { at: number }> {
  private pending = new Map<string, R>()
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly keyOf: (row: R) => string,
    private readonly write: (rows: R[]) => Promise<void>,
    private readonly options: { flushMs?: number; maxKeys?: number; onFlushError?: (err: unknown) => void } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch((err) => this.options.onFlushError?.(err))
    }, this.options.flushMs ?? 5000)
    this.timer.unref()
  }

  /** Moves the row's instant forward (never back); a new key waits only while there is room. */
  note(row: R): void {
    const key = this.keyOf(row)
    const cur = this.pending.get(key)
    if (cur) cur.at = Math.max(cur.at, row.at)
    else if (this.pending.size < (this.options.maxKeys ?? 100_000)) this.pending.set(key, row)
  }

  async flush(): Promise<void> {
    const rows = [...this.pending.values()]
    this.pending = new Map()
    try {
      await this.write(rows)
    } catch (err) {
      for (const r of rows) {
        const key = this.keyOf(r)
        if (!this.pending.has(key)) this.pending.set(key, r)
      }
      throw err
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush()
  }
}
