// The in-process replay cache (SPEC §1.1 embedded mode; also the fail-open fallback of
// §7). Node runs one claim at a time, so check-and-set on a Map is atomic in the process.
//
// Memory is bounded twice: expired entries are swept by an unref'd timer (and on demand
// when full), and the number of entries is capped. At the cap a new claim is refused with
// ReplayCacheUnavailable (the caller answers 503) rather than evicting an unexpired entry:
// forgetting a nonce inside its window would let that request be replayed.
import { hashKey, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, type ReplayCache } from './types.js'

export interface MemoryReplayCacheOptions {
  /** Most entries held at once; default 1,000,000 (about 150 MB). */
  maxEntries?: number
  /** How often expired entries are swept; default 10 s. */
  sweepIntervalMs?: number
}

export class MemoryReplayCache implements ReplayCache {
  readonly #expires = new Map<string, number>()
  readonly #maxEntries: number
  readonly #timer: NodeJS.Timeout

  constructor(options: MemoryReplayCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 1_000_000
    this.#timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000)
    this.#timer.unref()
  }

  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    const ttl = wholeSeconds(ttlSeconds)
    const k = hashKey(key)
    const now = Date.now()
    const until = this.#expires.get(k)
    if (until !== undefined && until > now) return false
    if (until === undefined && this.#expires.size >= this.#maxEntries) {
      this.sweep()
      if (this.#expires.size >= this.#maxEntries) {
        throw new ReplayCacheUnavailable(`replay cache full (${this.#maxEntries} unexpired entries)`)
      }
    }
    this.#expires.set(k, now + ttl * 1000)
    return true
  }

  /** True while `key` is claimed and unexpired (the resilient wrapper checks it after an outage). */
  has(key: string): boolean {
    const until = this.#expires.get(hashKey(key))
    return until !== undefined && until > Date.now()
  }

  /** Unexpired entries held. */
  get size(): number {
    return this.#expires.size
  }

  /** Drops expired entries. */
  sweep(): void {
    const now = Date.now()
    for (const [k, until] of this.#expires) if (until <= now) this.#expires.delete(k)
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#expires.clear()
  }
}
