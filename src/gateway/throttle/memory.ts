// In-process failure counting (docs/operations.md#modes embedded mode; the fallback while Redis is away).
// A fixed window per key, started by its first failure, as the Redis implementation does.
// Memory is capped: when full, expired windows are dropped, then the oldest window; an
// attacker cycling through addresses must not be able to exhaust memory, and losing the
// oldest count only makes throttling a little more lenient.
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
  readonly #windows = new Map<string, Window>()
  readonly #maxEntries: number

  constructor(readonly settings: MemoryFailureThrottleOptions) {
    this.#maxEntries = settings.maxEntries ?? 100_000
  }

  #live(key: string, now: number): Window | undefined {
    const k = hashKey(key)
    const w = this.#windows.get(k)
    if (w && w.endsAt <= now) {
      this.#windows.delete(k)
      return undefined
    }
    return w
  }

  async check(keys: string[]): Promise<number> {
    return this.peek(keys)
  }

  peek(keys: string[]): number {
    const now = Date.now()
    let wait = 0
    for (const key of keys) {
      const w = this.#live(key, now)
      if (w && w.failures >= this.settings.maxFailures) wait = Math.max(wait, Math.ceil((w.endsAt - now) / 1000))
    }
    return wait
  }

  async recordFailure(keys: string[]): Promise<void> {
    const now = Date.now()
    for (const key of keys) {
      const w = this.#live(key, now)
      if (w) {
        w.failures++
        continue
      }
      if (this.#windows.size >= this.#maxEntries) this.#makeRoom(now)
      this.#windows.set(hashKey(key), { failures: 1, endsAt: now + this.settings.windowSeconds * 1000 })
    }
  }

  #makeRoom(now: number): void {
    for (const [k, w] of this.#windows) if (w.endsAt <= now) this.#windows.delete(k)
    // Map iterates in insertion order: the first key holds the oldest window.
    while (this.#windows.size >= this.#maxEntries) {
      const oldest = this.#windows.keys().next().value as string
      this.#windows.delete(oldest)
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
