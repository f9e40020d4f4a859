// Where the verifiers load secrets (the "load" step of Kong's pipeline): the identity
// store behind an in-memory cache, so that a signed request does not cost a database
// round trip and an AES decryption every time.
//
// Choices:
// - Found entries live `ttlMs` (5 s). A change made in this process is seen at once: the
//   store announces every change it commits (IdentityChangeSource) and the matching
//   entries are dropped. A change made by another gateway process is seen within the TTL.
// - "Unknown" answers are cached too, for `negativeTtlMs` (2 s), so that a client
//   hammering with an unknown key or user does not reach the database on each request.
//   They live in their own bounded map, so a flood of random keys evicts only other
//   negative answers, never the entries of real clients.
// - Each map is an LRU bounded by `maxEntries` (10,000), holding decrypted secrets in
//   process memory only; nothing is ever written elsewhere or logged. The maps are
//   lru-cache's (as fast on a hit as the Map this replaced, and much faster to fill:
//   bench/micro/lru.ts), read with this lookup's clock.
// - Concurrent misses for one key share one load. An invalidation during a load keeps
//   that load's (possibly stale) answer out of the cache, and still gives it to the
//   callers waiting on it; lru-cache's fetchMethod would reject them instead (a delete
//   aborts the fetch), hence the few lines of `inflight` below.
// - Store errors are not cached: they propagate (the gateway answers 503, docs/operations.md#dependability).
// - A consumer secret rotated on another gateway (docs/gateway.md#rotating-a-secret): a
//   signature that fails against a cached consumer is checked once more against the store
//   (freshConsumer), which also refills the cache, so the new secret works here at once.
//   Those reloads are spaced `refreshSpacingMs` (1 s) apart per consumer, so a stream of
//   bad signatures costs at most one query a second each. The previous secret's expiry is
//   compared at each request's time, never the cache's; the replaced secret of a rotation
//   without overlap may still verify here until the entry's TTL ends.
import { LRUCache } from 'lru-cache'
import type { ApiPasswordEntry, ConsumerEntry, CredentialLookup, TokenEntry } from '../domain/auth.js'
import type { IdentityChange, IdentityChangeSource } from './sql-identity-store.js'
import type { CredentialRepository } from './types.js'

type Kind = 'user' | 'consumer' | 'token'

/** The verifiers' answers read from the store on every call: what the cache below loads through, and must agree with. */
export function storeCredentialLookup(store: CredentialRepository): CredentialLookup {
  return {
    async apiPassword(userId) {
      const found = await store.getApiPassword(userId)
      return found && { userId: found.user.id, userName: found.user.name, apiPassword: found.apiPassword }
    },
    async consumer(key) {
      const found = await store.getConsumer(key)
      return found && { key: found.consumer.key, name: found.consumer.name, secret: found.secret, scopes: found.consumer.scopes, ...(found.previous ? { previous: found.previous } : {}) }
    },
    async accessToken(token) {
      const found = await store.getAccessToken(token)
      if (!found) return null
      // The user name goes into the forwarded identity (docs/gateway.md#forwarding).
      const user = await store.getUser(found.token.userId)
      if (!user) return null
      return {
        token: found.token.token,
        secret: found.secret,
        consumerKey: found.token.consumerKey,
        userId: user.id,
        userName: user.name,
        scopes: found.token.scopes,
        revoked: found.token.revokedAt !== null,
      }
    },
  }
}

export interface CredentialLookupOptions {
  /** How long a found credential is served from memory (default 5000 ms). */
  ttlMs?: number
  /** How long an "unknown" answer is served from memory (default 2000 ms). */
  negativeTtlMs?: number
  /** Bound of each map (found users, consumers, tokens; unknown answers). Default 10,000. */
  maxEntries?: number
  /** Clock in milliseconds (default Date.now). */
  now?: () => number
  /** Least time between two reloads of one consumer by freshConsumer (default 1000 ms). */
  refreshSpacingMs?: number
}

/** Drops the entries whose value passes `test` (keys collected first: no delete while iterating). */
function deleteWhere<V extends NonNullable<unknown>>(cache: LRUCache<string, V>, test: (value: V) => boolean): void {
  const doomed: string[] = []
  for (const [key, value] of cache.entries()) if (test(value)) doomed.push(key)
  for (const key of doomed) cache.delete(key)
}

function isChangeSource(store: object): store is IdentityChangeSource {
  return typeof (store as Partial<IdentityChangeSource>).onChange === 'function'
}

export class CachedCredentialLookup implements CredentialLookup {
  private readonly ttlMs: number
  private readonly negativeTtlMs: number
  private readonly now: () => number
  private readonly users: LRUCache<string, ApiPasswordEntry>
  private readonly consumers: LRUCache<string, ConsumerEntry>
  private readonly tokens: LRUCache<string, TokenEntry>
  private readonly unknown: LRUCache<string, true>
  private readonly inflight = new Map<string, Promise<unknown>>()
  /** When each consumer was last reloaded by freshConsumer (entries live refreshSpacingMs). */
  private readonly refreshed: LRUCache<string, number>
  /** Bumped by every invalidation; a load that saw it change does not fill the cache. */
  private epoch = 0
  private readonly unsubscribe: () => void
  private readonly direct: CredentialLookup

  constructor(store: CredentialRepository, options: CredentialLookupOptions = {}) {
    this.direct = storeCredentialLookup(store)
    this.ttlMs = options.ttlMs ?? 5000
    this.negativeTtlMs = options.negativeTtlMs ?? 2000
    this.now = options.now ?? Date.now
    const max = options.maxEntries ?? 10_000
    // ttlResolution 0: the clock is read on each check, not remembered for a millisecond.
    const lru = <V extends NonNullable<unknown>>(ttl: number) => new LRUCache<string, V>({ max, ttl, ttlResolution: 0, perf: { now: this.now } })
    this.users = lru(this.ttlMs)
    this.consumers = lru(this.ttlMs)
    this.tokens = lru(this.ttlMs)
    this.unknown = lru(this.negativeTtlMs)
    this.refreshed = lru(options.refreshSpacingMs ?? 1000)
    this.unsubscribe = isChangeSource(store) ? store.onChange((change) => this.handleChange(change)) : () => undefined
  }

  async apiPassword(userId: string): Promise<ApiPasswordEntry | null> {
    const entry = await this.cached('user', userId, this.users, () => this.direct.apiPassword(userId))
    return entry && { ...entry }
  }

  async consumer(key: string): Promise<ConsumerEntry | null> {
    const entry = await this.cached('consumer', key, this.consumers, () => this.direct.consumer(key))
    return entry && { ...entry, scopes: [...entry.scopes] }
  }

  /** The consumer loaded again from the store (at most once per refreshSpacingMs; otherwise what the cache holds), and cached. */
  async freshConsumer(key: string): Promise<ConsumerEntry | null> {
    if (this.refreshed.has(key)) return this.consumer(key)
    this.refreshed.set(key, this.now())
    this.invalidateConsumer(key)
    return this.consumer(key)
  }

  async accessToken(token: string): Promise<TokenEntry | null> {
    const entry = await this.cached('token', token, this.tokens, () => this.direct.accessToken(token))
    return entry && { ...entry, scopes: [...entry.scopes] }
  }

  /** Drops the user's API password and every cached token of the user (they carry the user's name). */
  invalidateUser(id: string): void {
    this.epoch += 1
    this.users.delete(id)
    this.unknown.delete(`user:${id}`)
    this.inflight.delete(`user:${id}`)
    deleteWhere(this.tokens, (t) => t.userId === id)
  }

  invalidateConsumer(key: string): void {
    this.epoch += 1
    this.consumers.delete(key)
    this.unknown.delete(`consumer:${key}`)
    this.inflight.delete(`consumer:${key}`)
  }

  invalidateToken(token: string): void {
    this.epoch += 1
    this.tokens.delete(token)
    this.unknown.delete(`token:${token}`)
    this.inflight.delete(`token:${token}`)
  }

  clear(): void {
    this.epoch += 1
    this.users.clear()
    this.consumers.clear()
    this.tokens.clear()
    this.unknown.clear()
    this.refreshed.clear()
    this.inflight.clear()
  }

  /** Stops listening to the store's changes and empties the cache. */
  dispose(): void {
    this.unsubscribe()
    this.clear()
  }

  private handleChange(change: IdentityChange): void {
    if (change.kind === 'user') this.invalidateUser(change.id)
    else if (change.kind === 'consumer') this.invalidateConsumer(change.key)
    else this.invalidateToken(change.token)
  }

  /** What memory holds for `key`: the entry, null when it is known not to exist, undefined when only a load can tell. */
  private held<V extends NonNullable<unknown>>(kind: Kind, key: string, found: LRUCache<string, V>): V | null | undefined {
    const hit = found.get(key)
    if (hit !== undefined) return hit
    return this.unknown.get(`${kind}:${key}`) ? null : undefined
  }

  private async cached<V extends NonNullable<unknown>>(kind: Kind, key: string, found: LRUCache<string, V>, load: () => Promise<V | null>): Promise<V | null> {
    const held = this.held(kind, key, found)
    if (held !== undefined) return held
    const slot = `${kind}:${key}`
    const pending = this.inflight.get(slot) as Promise<V | null> | undefined
    if (pending) return pending
    const epoch = this.epoch
    const loading = load().then(
      (value) => {
        if (this.inflight.get(slot) === loading) this.inflight.delete(slot)
        if (this.epoch === epoch) {
          if (value === null) this.unknown.set(slot, true)
          else found.set(key, value)
        }
        return value
      },
      (err: unknown) => {
        if (this.inflight.get(slot) === loading) this.inflight.delete(slot)
        throw err
      },
    )
    this.inflight.set(slot, loading)
    return loading
  }
}
