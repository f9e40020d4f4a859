// The in-process replay cache (docs/operations.md#modes embedded mode; also the fail-open fallback of
// docs/gateway.md#the-replay-cache; docs/security.md#replay-cache-bounds). Node runs one claim at a time, so
// check-and-set on a Map is atomic in the process.
//
// Memory is bounded twice, and neither bound may open a replay:
// - Each client (an OAuth token, a WSSE user) holds at most `perClientMax` unexpired
//   nonces; past it that client alone is refused (ReplayClientQuotaExceeded, answered
//   429) until its own entries expire, so one client cannot fill the cache for everyone.
// - The cache holds at most `maxEntries`, by default `perClientMax` × `clients`: that many
//   clients can each be at their quota before anyone else waits. When it is full, the
//   entry that expires first is evicted if its window has passed: a nonce whose request
//   timestamp is outside the window would be refused as stale anyway, so forgetting it
//   cannot let a request be replayed. Evicting a live one would, so when every entry is
//   still live the claim is refused with ReplayCacheUnavailable (the caller answers 503).
//
// Entries are kept in expiry order without sorting: claims of one TTL expire in the order
// they were made, so each distinct TTL (one per method in the gateway) has a FIFO queue,
// and the first entry to expire is at the head of one of them. Eviction, the timer's sweep
// and the quota's reclaim each pop expired heads, O(1) per entry, never a scan of the
// whole cache. (lru-cache does not fit: full, it evicts the least recently used entry
// whether or not it is live, and it allocates its arrays for `max` entries up front.)
import { hashKey, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, ReplayClientQuotaExceeded, type ReplayCache } from './types.js'

/** Clients that may each hold a full quota at once, by default (config auth.replayClients). */
export const defaultReplayClients = 32
/** Unexpired nonces one client may hold, by default (config auth.replayPerClientMax). */
export const defaultReplayPerClientMax = 50_000

export interface MemoryReplayCacheOptions {
  /** Most entries held at once; default `perClientMax` × `clients`. */
  maxEntries?: number
  /** Most entries one client holds at once; default 50,000 (83 fresh nonces a second over a 601 s window). */
  perClientMax?: number
  /** Clients that may each hold `perClientMax` entries at once (sizes `maxEntries`); default 32. */
  clients?: number
  /** How often expired entries are dropped; default 10 s. */
  sweepIntervalMs?: number
  /** The clock entries expire by, ms; default Date.now (the gateway passes its own). */
  now?: () => number
}

interface Claim {
  until: number
  client: string | undefined
}

/** Claims of one TTL in the order they were made, which is the order they expire in. */
class ExpiryQueue {
  #keys: string[] = []
  #claims: Claim[] = []
  #head = 0

  push(key: string, claim: Claim): void {
    this.#keys.push(key)
    this.#claims.push(claim)
  }

  /** The earliest-expiring claim, or undefined when empty. */
  get first(): Claim | undefined {
    return this.#claims[this.#head]
  }

  get firstKey(): string {
    return this.#keys[this.#head]!
  }

  shift(): void {
    this.#head++
    // Drop the consumed front once it is most of the arrays: amortised O(1) per entry.
    if (this.#head >= 1024 && this.#head * 2 >= this.#keys.length) {
      this.#keys = this.#keys.slice(this.#head)
      this.#claims = this.#claims.slice(this.#head)
      this.#head = 0
    }
  }

  get length(): number {
    return this.#keys.length - this.#head
  }
}

export class MemoryReplayCache implements ReplayCache {
  readonly #claims = new Map<string, Claim>()
  readonly #perClient = new Map<string, number>()
  /** One queue per TTL in milliseconds. */
  readonly #queues = new Map<number, ExpiryQueue>()
  readonly #maxEntries: number
  readonly #perClientMax: number
  readonly #timer: NodeJS.Timeout
  readonly #now: () => number

  constructor(options: MemoryReplayCacheOptions = {}) {
    this.#now = options.now ?? (() => Date.now())
    this.#perClientMax = options.perClientMax ?? defaultReplayPerClientMax
    this.#maxEntries = options.maxEntries ?? this.#perClientMax * (options.clients ?? defaultReplayClients)
    this.#timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000)
    this.#timer.unref()
  }

  /** The most entries held at once. */
  get maxEntries(): number {
    return this.#maxEntries
  }

  async claim(key: string, ttlSeconds: number, client?: string): Promise<boolean> {
    const ttlMs = wholeSeconds(ttlSeconds) * 1000
    const k = hashKey(key)
    const now = this.#now()
    const held = this.#claims.get(k)
    if (held !== undefined && held.until > now) return false
    if (client !== undefined && (this.#perClient.get(client) ?? 0) >= this.#perClientMax) {
      this.#dropExpired(now)
      if ((this.#perClient.get(client) ?? 0) >= this.#perClientMax) {
        throw new ReplayClientQuotaExceeded(`one client holds ${this.#perClientMax} unexpired nonces`)
      }
    }
    if (held === undefined && this.#claims.size >= this.#maxEntries && !this.#evictOneExpired(now)) {
      throw new ReplayCacheUnavailable(`replay cache full (${this.#maxEntries} unexpired entries)`)
    }
    if (held !== undefined) this.#release(held.client)
    const claim: Claim = { until: now + ttlMs, client }
    this.#claims.set(k, claim)
    let queue = this.#queues.get(ttlMs)
    if (queue === undefined) this.#queues.set(ttlMs, (queue = new ExpiryQueue()))
    queue.push(k, claim)
    if (client !== undefined) this.#perClient.set(client, (this.#perClient.get(client) ?? 0) + 1)
    return true
  }

  #release(client: string | undefined): void {
    if (client === undefined) return
    const n = (this.#perClient.get(client) ?? 1) - 1
    if (n <= 0) this.#perClient.delete(client)
    else this.#perClient.set(client, n)
  }

  /** Pops heads that were replaced (their key claimed again after expiry) or that are gone. */
  #skipStale(queue: ExpiryQueue): void {
    while (queue.length > 0 && this.#claims.get(queue.firstKey) !== queue.first) queue.shift()
  }

  /** Forgets the queue's head (an expired claim). */
  #forgetFirst(queue: ExpiryQueue): void {
    const claim = queue.first!
    this.#claims.delete(queue.firstKey)
    this.#release(claim.client)
    queue.shift()
  }

  /** Evicts the entry that expires first if its window has passed; false when every entry is live. */
  #evictOneExpired(now: number): boolean {
    let earliest: ExpiryQueue | undefined
    for (const queue of this.#queues.values()) {
      this.#skipStale(queue)
      const first = queue.first
      if (first !== undefined && first.until <= now && (earliest === undefined || first.until < earliest.first!.until)) earliest = queue
    }
    if (earliest === undefined) return false
    this.#forgetFirst(earliest)
    return true
  }

  /** Drops every expired entry: pops expired heads only, so the work is the entries dropped. */
  #dropExpired(now: number): void {
    for (const [ttl, queue] of this.#queues) {
      for (;;) {
        this.#skipStale(queue)
        const first = queue.first
        if (first === undefined || first.until > now) break
        this.#forgetFirst(queue)
      }
      if (queue.length === 0) this.#queues.delete(ttl)
    }
  }

  /** True while `key` is claimed and unexpired (the resilient wrapper checks it after an outage). */
  has(key: string): boolean {
    const held = this.#claims.get(hashKey(key))
    return held !== undefined && held.until > this.#now()
  }

  /** Entries held (expired ones go at the next sweep or eviction). */
  get size(): number {
    return this.#claims.size
  }

  /** Drops expired entries. */
  sweep(): void {
    this.#dropExpired(this.#now())
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#claims.clear()
    this.#perClient.clear()
    this.#queues.clear()
  }
}
