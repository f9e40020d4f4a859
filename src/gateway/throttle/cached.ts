// A short-lived local view of the shared throttle (docs/operations.md#throttling), so that a client whose
// credentials keep verifying costs no Redis round trip per request: a key seen clear
// stays clear here for `clearMs` (1 s by default), a blocked key stays blocked until its
// window ends. Every failure recorded through this gateway drops its keys from the view
// at once; only a block reached through another gateway is seen up to `clearMs` late.
import type { FailureThrottle } from './types.js'

export interface CachedFailureThrottleOptions {
  clearMs?: number
  maxEntries?: number
  now?: () => number
}

export class CachedFailureThrottle implements FailureThrottle {
  /** key → time until which the verdict holds, and the verdict (seconds to wait; 0 = clear). */
  readonly #view = new Map<string, { until: number; wait: number }>()
  readonly #clearMs: number
  readonly #maxEntries: number
  readonly #now: () => number

  constructor(
    readonly primary: FailureThrottle,
    options: CachedFailureThrottleOptions = {},
  ) {
    this.#clearMs = options.clearMs ?? 1000
    this.#maxEntries = options.maxEntries ?? 50_000
    this.#now = options.now ?? Date.now
  }

  peek(keys: string[]): number | undefined {
    const now = this.#now()
    let wait = 0
    for (const key of keys) {
      const seen = this.#view.get(key)
      if (seen === undefined || seen.until <= now) return undefined
      wait = Math.max(wait, seen.wait)
    }
    return wait
  }

  async check(keys: string[]): Promise<number> {
    const now = this.#now()
    let wait = 0
    const unknown: string[] = []
    for (const key of keys) {
      const seen = this.#view.get(key)
      if (seen && seen.until > now) wait = Math.max(wait, seen.wait)
      else unknown.push(key)
    }
    if (unknown.length === 0) return wait
    const waits = await Promise.all(unknown.map((key) => this.primary.check([key])))
    if (this.#view.size + unknown.length > this.#maxEntries) this.#view.clear()
    unknown.forEach((key, i) => {
      const w = waits[i]!
      this.#view.set(key, { wait: w, until: now + (w > 0 ? w * 1000 : this.#clearMs) })
      wait = Math.max(wait, w)
    })
    return wait
  }

  async recordFailure(keys: string[]): Promise<void> {
    for (const key of keys) this.#view.delete(key)
    await this.primary.recordFailure(keys)
  }

  async reset(keys: string[]): Promise<void> {
    for (const key of keys) this.#view.delete(key)
    await this.primary.reset(keys)
  }

  async close(): Promise<void> {
    this.#view.clear()
    await this.primary.close()
  }
}
