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
//   process memory only; nothing is ever written elsewhere or logged.
// - Concurrent misses for one key share one load. An invalidation during a load keeps
//   that load's (possibly stale) answer out of the cache.
// - Store errors are not cached: they propagate (the gateway answers 503, SPEC §7).
import type { ApiPasswordEntry, ConsumerEntry, CredentialLookup, TokenEntry } from '../auth/types.js'
import type { IdentityChange, IdentityChangeSource } from './sql-identity-store.js'
import type { CredentialRepository } from './types.js'

type Kind = 'user' | 'consumer' | 'token'

export interface CredentialLookupOptions {
  /** How long a found credential is served from memory (default 5000 ms). */
  ttlMs?: number
  /** How long an "unknown" answer is served from memory (default 2000 ms). */
  negativeTtlMs?: number
  /** Bound of each map (found users, consumers, tokens; unknown answers). Default 10,000. */
  maxEntries?: number
  /** Clock in milliseconds (default Date.now). */
  now?: () => number
}

/** A Map kept in least-recently-used order (re-inserted on each hit), with expiry times. */
class ExpiringLru<V> {
  private readonly map = new Map<string, { value: V; expiresAt: number }>()
  constructor(private readonly max: number) {}

  get(key: string, now: number): { value: V } | undefined {
    const hit = this.map.get(key)
    if (!hit) return undefined
    this.map.delete(key)
    if (hit.expiresAt <= now) return undefined
    this.map.set(key, hit)
    return { value: hit.value }
  }

  set(key: string, value: V, expiresAt: number): void {
    this.map.delete(key)
    this.map.set(key, { value, expiresAt })
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value!)
  }

  delete(key: string): void {
    this.map.delete(key)
  }

  deleteWhere(test: (value: V) => boolean): void {
    for (const [key, entry] of this.map) if (test(entry.value)) this.map.delete(key)
  }

  clear(): void {
    this.map.clear()
  }
}

function isChangeSource(store: object): store is IdentityChangeSource {
  return typeof (store as Partial<IdentityChangeSource>).onChange === 'function'
}

export class CachedCredentialLookup implements CredentialLookup {
  private readonly ttlMs: number
  private readonly negativeTtlMs: number
  private readonly now: () => number
  private readonly users: ExpiringLru<ApiPasswordEntry>
  private readonly consumers: ExpiringLru<ConsumerEntry>
  private readonly tokens: ExpiringLru<TokenEntry>
  private readonly unknown: ExpiringLru<true>
  private readonly inflight = new Map<string, Promise<unknown>>()
  /** Bumped by every invalidation; a load that saw it change does not fill the cache. */
  private epoch = 0
  private readonly unsubscribe: () => void

  constructor(
    private readonly store: CredentialRepository,
    options: CredentialLookupOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 5000
    this.negativeTtlMs = options.negativeTtlMs ?? 2000
    this.now = options.now ?? Date.now
    const max = options.maxEntries ?? 10_000
    this.users = new ExpiringLru(max)
    this.consumers = new ExpiringLru(max)
    this.tokens = new ExpiringLru(max)
    this.unknown = new ExpiringLru(max)
    this.unsubscribe = isChangeSource(store) ? store.onChange((change) => this.handleChange(change)) : () => undefined
  }

  async apiPassword(userId: string): Promise<ApiPasswordEntry | null> {
    const entry = await this.cached('user', userId, this.users, async () => {
      const found = await this.store.getApiPassword(userId)
      return found && { userId: found.user.id, userName: found.user.name, apiPassword: found.apiPassword }
    })
    return entry && { ...entry }
  }

  async consumer(key: string): Promise<ConsumerEntry | null> {
    const entry = await this.cached('consumer', key, this.consumers, async () => {
      const found = await this.store.getConsumer(key)
      return found && { key: found.consumer.key, name: found.consumer.name, secret: found.secret, scopes: found.consumer.scopes }
    })
    return entry && { ...entry, scopes: [...entry.scopes] }
  }

  async accessToken(token: string): Promise<TokenEntry | null> {
    const entry = await this.cached('token', token, this.tokens, async () => {
      const found = await this.store.getAccessToken(token)
      if (!found) return null
      // The user name goes into the forwarded identity (SPEC §4.6).
      const user = await this.store.getUser(found.token.userId)
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
    })
    return entry && { ...entry, scopes: [...entry.scopes] }
  }

  /** Drops the user's API password and every cached token of the user (they carry the user's name). */
  invalidateUser(id: string): void {
    this.epoch += 1
    this.users.delete(id)
    this.unknown.delete(`user:${id}`)
    this.inflight.delete(`user:${id}`)
    this.tokens.deleteWhere((t) => t.userId === id)
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

  private async cached<V>(kind: Kind, key: string, found: ExpiringLru<V>, load: () => Promise<V | null>): Promise<V | null> {
    const now = this.now()
    const hit = found.get(key, now)
    if (hit) return hit.value
    const slot = `${kind}:${key}`
    if (this.unknown.get(slot, now)) return null
    const pending = this.inflight.get(slot) as Promise<V | null> | undefined
    if (pending) return pending
    const epoch = this.epoch
    const loading = load().then(
      (value) => {
        if (this.inflight.get(slot) === loading) this.inflight.delete(slot)
        if (this.epoch === epoch) {
          if (value === null) this.unknown.set(slot, true, this.now() + this.negativeTtlMs)
          else found.set(key, value, this.now() + this.ttlMs)
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
