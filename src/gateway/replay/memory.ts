// The in-process replay cache (SPEC §1.1 embedded mode; also the fail-open fallback of
// §7). Node runs one claim at a time, so check-and-set on a Map is atomic in the process.
//
// Memory is bounded twice: expired entries are swept by an unref'd timer (and on demand
// when full), and the number of entries is capped. At the cap a new claim is refused with
// ReplayCacheUnavailable (the caller answers 503) rather than evicting an unexpired entry:
// forgetting a nonce inside its window would let that request be replayed. So that one
// client cannot reach that cap and deny everyone, each client (an OAuth token, a WSSE
// user) may hold at most `perClientMax` entries; past it that client alone is refused
// (ReplayClientQuotaExceeded, answered 429) until its own entries expire.
import { hashKey, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, ReplayClientQuotaExceeded, type ReplayCache } from './types.js'

export interface MemoryReplayCacheOptions {
  /** Most entries held at once; default 1,000,000 (about 150 MB). */
  maxEntries?: number
  /** Most entries one client holds at once; default 50,000 (83 fresh nonces a second over a 601 s window). */
  perClientMax?: number
  /** How often expired entries are swept; default 10 s. */
  sweepIntervalMs?: number
}

interface Claim {
  until: number
  client: string | undefined
}

export class MemoryReplayCache implements ReplayCache {
  readonly #expires = new Map<string, Claim>()
  readonly #perClient = new Map<string, number>()
  readonly #maxEntries: number
  readonly #perClientMax: number
  readonly #timer: NodeJS.Timeout

  constructor(options: MemoryReplayCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 1_000_000
    this.#perClientMax = options.perClientMax ?? 50_000
    this.#timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000)
    this.#timer.unref()
  }

  async claim(key: string, ttlSeconds: number, client?: string): Promise<boolean> {
    const ttl = wholeSeconds(ttlSeconds)
    const k = hashKey(key)
    const now = Date.now()
    const held = this.#expires.get(k)
    if (held !== undefined && held.until > now) return false
    if (client !== undefined && (this.#perClient.get(client) ?? 0) >= this.#perClientMax) {
      this.sweep()
      if ((this.#perClient.get(client) ?? 0) >= this.#perClientMax) {
        throw new ReplayClientQuotaExceeded(`one client holds ${this.#perClientMax} unexpired nonces`)
      }
    }
    if (held === undefined && this.#expires.size >= this.#maxEntries) {
      this.sweep()
      if (this.#expires.size >= this.#maxEntries) {
        throw new ReplayCacheUnavailable(`replay cache full (${this.#maxEntries} unexpired entries)`)
      }
    }
    if (held !== undefined) this.#release(held.client)
    this.#expires.set(k, { until: now + ttl * 1000, client })
    if (client !== undefined) this.#perClient.set(client, (this.#perClient.get(client) ?? 0) + 1)
    return true
  }

  #release(client: string | undefined): void {
    if (client === undefined) return
    const n = (this.#perClient.get(client) ?? 1) - 1
    if (n <= 0) this.#perClient.delete(client)
    else this.#perClient.set(client, n)
  }

  /** True while `key` is claimed and unexpired (the resilient wrapper checks it after an outage). */
  has(key: string): boolean {
    const held = this.#expires.get(hashKey(key))
    return held !== undefined && held.until > Date.now()
  }

  /** Unexpired entries held. */
  get size(): number {
    return this.#expires.size
  }

  /** Drops expired entries. */
  sweep(): void {
    const now = Date.now()
    for (const [k, held] of this.#expires) {
      if (held.until > now) continue
      this.#expires.delete(k)
      this.#release(held.client)
    }
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#expires.clear()
    this.#perClient.clear()
  }
}
