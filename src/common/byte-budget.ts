// Bytes of request bodies held in memory, bounded for the whole process and per holder
// (docs/operations-memory.md): the gateway's form bodies, the core's uploads. A request
// takes bytes as they arrive and gives all of them back when its answer is done; bytes it
// could not take are refused, so the process never holds more than `total`, whatever
// the number of connections.

/** Why take refused: the process's bound, or the holder's share. */
export type BudgetRefusal = 'total' | 'holder'

export class ByteBudget {
  private used = 0
  private readonly byHolder = new Map<string, number>()

  /**
   * @param total bytes all holders together may hold
   * @param perHolder bytes one holder (a user; '' for anonymous requests) may hold
   */
  constructor(
    readonly total: number,
    readonly perHolder: number = total,
  ) {}

  /** Bytes held now, by everyone. */
  get inUse(): number {
    return this.used
  }

  /** Takes `bytes` for `holder`; null when taken, else which bound refused them (nothing taken). */
  take(holder: string, bytes: number): BudgetRefusal | null {
    if (this.used + bytes > this.total) return 'total'
    const held = this.byHolder.get(holder) ?? 0
    if (held + bytes > this.perHolder) return 'holder'
    this.used += bytes
    this.byHolder.set(holder, held + bytes)
    return null
  }

  /** Gives back `bytes` that `holder` took. */
  release(holder: string, bytes: number): void {
    if (bytes <= 0) return
    this.used = Math.max(0, this.used - bytes)
    const left = (this.byHolder.get(holder) ?? 0) - bytes
    if (left > 0) this.byHolder.set(holder, left)
    else this.byHolder.delete(holder)
  }
}
