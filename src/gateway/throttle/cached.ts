// A short-lived local view of the shared throttle (docs/operations.md#throttling), so that a client whose
// credentials keep verifying costs no Redis round trip per request: a key seen clear
// stays clear here for `clearMs` (1 s by default), a blocked key stays blocked until its
// window ends. Every failure recorded through this gateway drops its keys from the view
// at once; only a block reached through another gateway is seen up to `clearMs` late.
// The view is an LRU (lru-cache) of `maxEntries`: when full, the least recently asked
// key is dropped (and asked again of the shared throttle), never the whole view.
import { LRUCache } from 'lru-cache'
import type { FailureThrottle } from './types.js'

export interface CachedFailureThrottleOptions {
  clearMs?: number
  maxEntries?: number
  now?: () => number
}

export class CachedFailureThrottle implements FailureThrottle {
  /** key → the verdict (seconds to wait; 0 = clear), held until it may have changed. */
  readonly #view: LRUCache<string, number>
  readonly #clearMs: number

  constructor(
    readonly primary: FailureThrottle,
    options: CachedFailureThrottleOptions = {},
  ) {
    this.#clearMs = options.clearMs ?? 1000
    const now = options.now ?? Date.now
    this.#view = new LRUCache<string, number>({ max: options.maxEntries ?? 50_000, ttlResolution: 0, perf: { now: () => now() } })
  }

  async check(keys: string[]): Promise<number> {
    let wait = 0
    const unknown: string[] = []
    for (const key of keys) {
      const seen = this.#view.get(key)
      if (seen === undefined) unknown.push(key)
      else wait = Math.max(wait, seen)
    }
    if (unknown.length === 0) return wait
    const waits = await Promise.all(unknown.map((key) => this.primary.check([key])))
    unknown.forEach((key, i) => {
      const w = waits[i]!
      this.#view.set(key, w, { ttl: w > 0 ? w * 1000 : this.#clearMs })
      wait = Math.max(wait, w)
    })
    return wait
  }

  peek(keys: string[]): number | null {
    let wait = 0
    for (const key of keys) {
      const seen = this.#view.get(key)
      if (seen === undefined) return null
      wait = Math.max(wait, seen)
    }
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
