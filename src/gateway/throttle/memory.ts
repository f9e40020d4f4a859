// In-process failure counting (docs/operations.md#modes embedded mode; the fallback while Redis is away).
// A fixed window per key, started by its first failure, as the Redis implementation does.
// Memory is capped: an attacker cycling through addresses must not be able to exhaust it.
// The windows are an LRU (lru-cache) whose entries expire with their window: when full,
// the least recently counted key is forgotten, and the most recent failures stay counted.
import { LRUCache } from 'lru-cache'
import { hashKey } from '../replay/key.js'
import type { FailureThrottle, ThrottleSettings } from './types.js'

export interface MemoryFailureThrottleOptions extends ThrottleSettings {
  /** Most keys tracked at once; default 100,000. */
  maxEntries?: number
}

interface Window {
  failures: number
  endsAt: number
}

export class MemoryFailureThrottle implements FailureThrottle {
  readonly #windows: LRUCache<string, Window>

  constructor(readonly settings: MemoryFailureThrottleOptions) {
    // Date.now, read on each call, so that the window ends where endsAt says.
    this.#windows = new LRUCache<string, Window>({ max: settings.maxEntries ?? 100_000, ttl: settings.windowSeconds * 1000, ttlResolution: 0, perf: { now: () => Date.now() } })
  }

  async check(keys: string[]): Promise<number> {
    const now = Date.now()
    let wait = 0
    for (const key of keys) {
      const w = this.#windows.get(hashKey(key))
      if (w && w.failures >= this.settings.maxFailures) wait = Math.max(wait, Math.ceil((w.endsAt - now) / 1000))
    }
    return wait
  }

  async recordFailure(keys: string[]): Promise<void> {
    const now = Date.now()
    for (const key of keys) {
      const k = hashKey(key)
      const w = this.#windows.get(k)
      // Counted in place: the window keeps the end its first failure set.
      if (w) w.failures++
      else this.#windows.set(k, { failures: 1, endsAt: now + this.settings.windowSeconds * 1000 })
    }
  }

  async reset(keys: string[]): Promise<void> {
    for (const key of keys) this.#windows.delete(hashKey(key))
  }

  /** Keys tracked (including windows not yet swept). */
  get size(): number {
    return this.#windows.size
  }

  async close(): Promise<void> {
    this.#windows.clear()
  }
}
