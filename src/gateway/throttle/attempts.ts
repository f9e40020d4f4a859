// The throttling rules (docs/operations.md#throttling, docs/operations.md#throttling), modelled on rate-limiter-
// flexible's login recipe: failures are counted so that an attacker cannot lock out
// someone who did nothing wrong.
//
// - pair:    consecutive failures of one user from one address (`maxFailures` within
//            `windowSeconds`). A success forgets them. This is the only rule that can stop
//            a user at an address they have signed in from before.
// - address: failures from one address, whoever they name (`addressMaxFailures` within
//            `addressWindowSeconds`, a much larger budget): stops one address guessing
//            across many users.
// - user:    failures naming one user, from anywhere (`userMaxFailures` within
//            `userWindowSeconds`, a much larger total than the pair's: by default 1,000 an
//            hour, so that guessers at a dozen addresses do not lock the real user out of a
//            new one): stops a guesser spread over very many addresses. Each refusal it
//            makes is counted (kigo_throttle_refusals_total{rule="user"}) and alerted on,
//            since it refuses the user everywhere but at known addresses. A success forgets
//            them.
// - locked:  an operator's explicit decision (`kigo users lock`, audited; user-locks.ts)
//            refuses the user's passwords from every address, known ones too, until
//            `kigo users unlock`. Nothing but an operator locks a user out everywhere.
// - known:   a user's success from an address marks the pair as known for
//            `knownAddressDays`; the address and user rules do not apply to a known pair,
//            so neither an attacker sharing the address (NAT, an untrusted proxy) nor one
//            hammering the user's ID from elsewhere can lock the user out where they work.
//
// Addresses are counted as networks: an IPv4 address alone, an IPv6 address by its /64
// (one subscriber's prefix: counting single IPv6 addresses would let a client rotate
// through 2^64 of them). API (Basic, WSSE) and web sign-in failures are counted apart
// (`realm`), so failures at one never lock the other. OAuth has no guessable secret and is
// never throttled. Each rule is a FailureThrottle, so every backend (memory, Redis with its
// fail-open fallback and local view) applies to each.
import { LRUCache } from 'lru-cache'
import type { FailureThrottle } from './types.js'
import { maxUserIdLength } from '../domain/identifiers.js'

export type ThrottleRealm = 'api' | 'web'

export interface Attempt {
  realm: ThrottleRealm
  /** The user the credential names; absent when it names none (a malformed header). */
  user?: string | undefined
  /** The client address (after trusted proxies). */
  ip: string
}

export interface AttemptThrottle {
  /** Whether an operator has locked the attempt's user (checked before check, never counted as a failure). */
  locked?(attempt: Attempt): boolean
  /** Seconds the attempt must wait; 0 when it may be verified. */
  check(attempt: Attempt): Promise<number>
  /**
   * The same verdict when the local views hold all it depends on, without a promise (a
   * client whose credentials keep verifying, asked again within a second); null otherwise.
   */
  checkNow?(attempt: Attempt): number | null
  /** Counts a failed attempt (wrong secret, stale or malformed credential). */
  failed(attempt: Attempt): Promise<void>
  /** A verified attempt: forgets the pair's and the user's failures, marks the pair known. */
  succeeded(attempt: Attempt & { user: string }): Promise<void>
  close(): Promise<void>
}

export interface AttemptRules {
  pair: FailureThrottle
  address: FailureThrottle
  user: FailureThrottle
  known: KnownPairs
}

/**
 * The pairs (a user at an address network) that verified within `knownAddressDays`. Kept
 * in a FailureThrottle of threshold 1, so that every backend serves it too: a pair's mark
 * is its one counted event, and the pair is known while that count's window lasts.
 */
export class KnownPairs {
  constructor(private readonly marks: FailureThrottle) {}

  async isKnown(pair: string): Promise<boolean> {
    return (await this.marks.check([pair])) > 0
  }

  /** isKnown's answer when the local view holds it; null otherwise. */
  knownNow(pair: string): boolean | null {
    const wait = this.marks.peek?.([pair]) ?? null
    return wait === null ? null : wait > 0
  }

  /** Marks the pair afresh, so that the known period runs from its latest success. */
  async mark(pair: string): Promise<void> {
    await this.marks.reset([pair])
    await this.marks.recordFailure([pair])
  }

  close(): Promise<void> {
    return this.marks.close()
  }
}

/** The network an address is counted as: IPv4 (or IPv4-mapped IPv6) alone, IPv6 by its /64. */
export function addressNetwork(ip: string): string {
  let a = ip.trim().toLowerCase()
  const zone = a.indexOf('%')
  if (zone !== -1) a = a.slice(0, zone)
  if (!a.includes(':')) return a
  const mapped = /^(?:0{0,4}:){0,5}(?:0{0,4}::?)?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a)
  if (mapped) return mapped[1]!
  const [head, tail] = a.includes('::') ? (a.split('::') as [string, string]) : [a, undefined]
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back]
  if (groups.length < 4 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g) && !/^\d+\.\d+\.\d+\.\d+$/.test(g))) return a
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`
}

/** Which rule refused an attempt (kigo_throttle_refusals_total's `rule`). */
export type RefusingRule = 'pair' | 'address' | 'user' | 'locked'

/** The wait the rules give an attempt that names a user (see the header), and the rule that set it. */
function verdict(pair: number, known: boolean, address: number, user: number): [number, RefusingRule | null] {
  if (pair > 0) return [pair, 'pair']
  if (known) return [0, null]
  if (address === 0 && user === 0) return [0, null]
  return address >= user ? [address, 'address'] : [user, 'user']
}

export interface RuleAttemptThrottleOptions {
  /** Each refusal, by realm and rule (kigo_throttle_refusals_total). */
  onRefusal?: (realm: ThrottleRealm, rule: RefusingRule) => void
  /** Operator locks (user-locks.ts); none: no user is locked. */
  locks?: { locked(userId: string): boolean }
}

/** The keys an attempt is counted under by each rule; only the address's when it names no user. */
interface RuleKeys {
  address: string
  pair?: string
  user?: string
  known?: string
}

function ruleKeys(realm: ThrottleRealm, user: string, net: string): RuleKeys {
  const address = `${realm}:addr:${net}`
  if (user === '') return { address }
  return { address, pair: `${realm}:pair:${user}@${net}`, user: `${realm}:user:${user}`, known: `${realm}:known:${user}@${net}` }
}

/** How long a pair's success bookkeeping is not repeated (see succeeded). */
const successMemoryMs = 60_000
/** Most pairs' successes and users' failures remembered for that bookkeeping. */
const maxRemembered = 100_000
/** Most attempts' keys held (see #keys): 10,000 clients, a few MB. */
const maxKeysHeld = 10_000

export class RuleAttemptThrottle implements AttemptThrottle {
  /**
   * Pair key → when its success was last written, for `successMemoryMs`; failures through
   * this gateway drop it. Bounded LRUs (lru-cache) here and below: when full, the least
   * recently seen is forgotten, and the most recent stay.
   */
  readonly #recentSuccess: LRUCache<string, number>
  /**
   * User key → when this gateway last counted a failure naming it (from any address). A
   * failure older than `successMemoryMs` precedes every success remembered above, so it
   * need not be kept longer.
   */
  readonly #lastFailure: LRUCache<string, number>
  /** Realm, client address and user ('' for none) → the attempt's rule keys (see #keys). */
  readonly #keysOf = new LRUCache<string, RuleKeys>({ max: maxKeysHeld })

  constructor(
    private readonly rules: AttemptRules,
    private readonly now: () => number = Date.now,
    private readonly options: RuleAttemptThrottleOptions = {},
  ) {
    const remembered = () => new LRUCache<string, number>({ max: maxRemembered, ttl: successMemoryMs, ttlResolution: 0, perf: { now: () => this.now() } })
    this.#recentSuccess = remembered()
    this.#lastFailure = remembered()
  }

  locked(a: Attempt): boolean {
    if (a.user === undefined || this.options.locks?.locked(a.user) !== true) return false
    this.options.onRefusal?.(a.realm, 'locked')
    return true
  }

  /** The verdict's wait, its refusal counted. */
  #refused(realm: ThrottleRealm, [wait, rule]: [number, RefusingRule | null]): number {
    if (rule !== null && wait > 0) this.options.onRefusal?.(realm, rule)
    return wait
  }

  /**
   * The rule keys of `a`'s realm, address network and user. Every Basic and WSSE request
   * asks for them twice (its verdict, then its success), so they are kept: a request of
   * a client seen before builds no key (bench/micro/throttle-keys.ts). A claimed user
   * longer than any user ID (which no request of a real client names) is not kept, so
   * that what is held stays a few MB whatever attempts name.
   */
  #keys(a: Attempt): RuleKeys {
    const user = a.user ?? ''
    if (user.length > maxUserIdLength) return ruleKeys(a.realm, user, addressNetwork(a.ip))
    // The address holds no space: realm, address and user read back one way only.
    const id = `${a.realm} ${a.ip} ${user}`
    let keys = this.#keysOf.get(id)
    if (keys === undefined) this.#keysOf.set(id, (keys = ruleKeys(a.realm, user, addressNetwork(a.ip))))
    return keys
  }

  async check(a: Attempt): Promise<number> {
    const k = this.#keys(a)
    if (k.pair === undefined) return this.#refused(a.realm, [await this.rules.address.check([k.address]), 'address'])
    const [pair, known, address, user] = await Promise.all([
      this.rules.pair.check([k.pair]),
      this.rules.known.isKnown(k.known!),
      this.rules.address.check([k.address]),
      this.rules.user.check([k.user!]),
    ])
    return this.#refused(a.realm, verdict(pair, known, address, user))
  }

  checkNow(a: Attempt): number | null {
    const k = this.#keys(a)
    if (k.pair === undefined) return null
    const { pair, known, address, user } = this.rules
    const p = pair.peek?.([k.pair]) ?? null
    const kn = p === null ? null : known.knownNow(k.known!)
    const ad = kn === null ? null : (address.peek?.([k.address]) ?? null)
    const us = ad === null ? null : (user.peek?.([k.user!]) ?? null)
    if (p === null || kn === null || ad === null || us === null) return null
    return this.#refused(a.realm, verdict(p, kn, ad, us))
  }

  async failed(a: Attempt): Promise<void> {
    const k = this.#keys(a)
    if (k.pair !== undefined) {
      this.#recentSuccess.delete(k.pair)
      this.#lastFailure.set(k.user!, this.now())
    }
    await Promise.all([
      this.rules.address.recordFailure([k.address]),
      ...(k.pair === undefined ? [] : [this.rules.pair.recordFailure([k.pair]), this.rules.user.recordFailure([k.user!])]),
    ])
  }

  /**
   * Every verified request is a success; writing it each time would cost shared-store
   * writes per request, so a pair's success is written at most once a minute (sooner
   * after a failure naming the user through this gateway). A failure counted through another gateway
   * meanwhile is forgotten at the next written success.
   */
  async succeeded(a: Attempt & { user: string }): Promise<void> {
    const k = this.#keys(a)
    const now = this.now()
    const last = this.#recentSuccess.get(k.pair!)
    const failedAt = this.#lastFailure.get(k.user!)
    if (last !== undefined && (failedAt === undefined || failedAt < last)) return
    this.#recentSuccess.set(k.pair!, now)
    await Promise.all([this.rules.pair.reset([k.pair!]), this.rules.user.reset([k.user!]), this.rules.known.mark(k.known!)])
  }

  async close(): Promise<void> {
    const { pair, address, user, known } = this.rules
    await Promise.all([pair.close(), address.close(), user.close(), known.close()])
  }
}
