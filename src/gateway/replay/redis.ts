// The shared replay cache (docs/operations.md#modes production, docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a):
// claims go into Redis sets sliced by claim time, checked and added by one script per
// event-loop turn (see claim), so two gateways on one Redis reject a nonce used at the
// other. Any error or timeout becomes ReplayCacheUnavailable; the client
// (src/common/redis.ts) fails fast while Redis is away, so a claim never hangs.
//
// What one claim costs Redis (docs/performance.md#the-replay-cache-in-redis): a member of
// the set of its slice, the first `storedDigestBytes` bytes of the SHA-256 of the caller's
// key, raw. A key of its own per claim cost 102.4 bytes a nonce, most of it Redis' own
// (the keyspace and expiry-table entries, the key, a slot of each table); a set member
// costs about 65, and the slice's one key and expiry are shared by every claim of the
// slice. 72 bits keep the members apart: among the 3 million nonces of a busy window the
// chance that two collide is about 10^-9, and a collision could only refuse one fresh
// request as a replay, never admit a replayed one.
//
// The slices (docs/gateway.md#the-replay-cache): a claim at time c (Redis' own clock,
// TIME, so that gateways with skewed clocks agree) goes into the set `<prefix><n>`, n =
// floor(c / slice), and is refused when its member is in that set or in any slice from
// floor((c - ttl) / slice) on, the earliest that can hold a claim made within ttl. A set
// expires (PEXPIREAT) when the TTL of the last claim it can hold has passed: (n + 1) ·
// slice + ttl. So a claim is refused for at least its TTL and at most one slice longer,
// never shorter. A claim reaches back over its own TTL: a key claimed earlier with a
// longer one is found only within the later claim's (the gateway claims with one TTL per
// method, 2 × window + 1).
//
// Keys of the shape 0.1.0 stored (`<legacyPrefix>` and the whole digest in base64url, one
// `SET NX EX` per claim) are claimed as well for a while after start (`legacyPrefix`, `legacyUntil`):
// during a rolling upgrade a nonce claimed at a gateway of either version is refused at
// the other (docs/gateway.md#the-replay-cache).
import type { RedisClient } from '../../common/redis.js'
import { hashKey, keyDigest, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, type ReplayCache } from './types.js'

/** Bytes of the SHA-256 digest kept per claim: the set member. */
export const storedDigestBytes = 9

/**
 * The default length of a slice. Each claim reads every slice its TTL reaches back to
 * (ttl / slice + 1 sets: 11 at the gateway's 601 s), and a member stays up to one slice
 * longer than its TTL (661 s instead of 601: a live window holds about 5% more members on
 * average). A minute keeps both moderate: the reads cost Redis about 17 µs a claim in a
 * full window, against 6 for a key per claim (docs/performance.md#the-replay-cache-in-redis),
 * and the longer life far less than the 37 bytes a nonce the sets save.
 */
export const defaultSliceMs = 60_000

function unavailable(err: unknown): ReplayCacheUnavailable {
  return new ReplayCacheUnavailable(`replay cache unavailable: ${(err as Error).message}`, { cause: err })
}

export interface RedisReplayCacheOptions {
  /**
   * Prefix of the slice sets; default `kr:{s}:` (the gateway's are `kr:{w}:` and `kr:{o}:`;
   * tests use a random one). In a Redis Cluster it must carry a hash tag, so that every
   * slice of a prefix lives in one slot, as one script reading several slices requires.
   */
  prefix?: string
  /** Length of a slice in milliseconds; default `defaultSliceMs`. Part of the key shape: every gateway on one Redis must use the same. */
  sliceMs?: number
  /** Prefix of the earlier key shape (one key per claim), claimed as well until `legacyUntil`; none by default. */
  legacyPrefix?: string
  /** Until when (epoch ms) keys of the earlier shape are claimed too; default never. */
  legacyUntil?: number
}

/** The member a claim adds to its slice: the first bytes of the key's digest. */
export function storedMember(key: string): Buffer {
  return keyDigest(key).subarray(0, storedDigestBytes)
}

/** The set of slice `n` (the claims made from n · sliceMs to (n + 1) · sliceMs of Redis' clock). */
export function sliceKey(prefix: string, n: number): string {
  return `${prefix}${n}`
}

/** The key 0.1.0 stored for the same claim: the prefix and the key's whole SHA-256 in base64url. */
export function legacyStoredKey(legacyPrefix: string, key: string): string {
  return legacyPrefix + hashKey(key)
}

/**
 * The claims of one turn in one command, in order. KEYS[1] is the prefix of the slice
 * sets (declared, so that a Cluster routes the script to their slot); ARGV[1] the slice
 * length in ms, then the n members, then their n TTLs in seconds. Claim i is refused (0)
 * when its member is in a slice its TTL reaches back to, else added to the current slice
 * (1): two claims of one member in one script answer 1 then 0, as separate scripts would.
 * Redis runs a script whole, so no other client's claim falls between a check and its SADD.
 * Only the current slice is written, so each earlier slice is read once for every member
 * of the script (SMISMEMBER, Redis 6.2), not once per claim: a slice read per call costs
 * Redis about a microsecond, and a claim reaches back over ten of them.
 * The current slice then expires no sooner than the TTL of its newest claims allows.
 * With KEYS[1 + i], claim i also sets that key of the earlier shape (SET NX EX) once its
 * member is added, and holds only when that key was not there either.
 */
const claimScript = `local prefix = KEYS[1]
local slice = tonumber(ARGV[1])
local n = (#ARGV - 1) / 2
local legacy = #KEYS > 1
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local current = math.floor(now / slice)
local currentKey = prefix .. current
local from = {}
local earliest = current
for i = 1, n do
  from[i] = math.floor((now - tonumber(ARGV[1 + n + i]) * 1000) / slice)
  if from[i] < earliest then earliest = from[i] end
end
local seen = {}
for s = earliest, current - 1 do
  local found = redis.call('SMISMEMBER', prefix .. s, unpack(ARGV, 2, 1 + n))
  for i = 1, n do
    if found[i] == 1 and s >= from[i] then seen[i] = true end
  end
end
local expireAt = 0
local claimed = {}
for i = 1, n do
  local ttl = tonumber(ARGV[1 + n + i])
  if not seen[i] and redis.call('SADD', currentKey, ARGV[1 + i]) == 1 then
    expireAt = math.max(expireAt, (current + 1) * slice + ttl * 1000)
    if not legacy or redis.call('SET', KEYS[1 + i], '1', 'EX', ttl, 'NX') then claimed[i] = 1 else claimed[i] = 0 end
  else
    claimed[i] = 0
  end
end
if expireAt > 0 then
  local left = redis.call('PTTL', currentKey)
  if left < 0 or now + left < expireAt then redis.call('PEXPIREAT', currentKey, expireAt) end
end
return claimed`

/**
 * Most claims in one script: Redis serves no other client while a script runs, so a
 * flood's turn of thousands of claims goes as several scripts of a fraction of a
 * millisecond each, not as one that holds Redis for many.
 */
const maxClaimsPerScript = 256

/** The script as a command of the client (ioredis defineCommand: EVALSHA, EVAL when Redis lacks it). */
const claimCommand = 'kigoClaimNonces'
interface ClaimCommand {
  [claimCommand](numberOfKeys: number, ...keysThenArgs: Array<Buffer | string | number>): Promise<number[]>
}

interface PendingClaim {
  key: string
  ttl: number
  resolve: (claimed: boolean) => void
  reject: (err: ReplayCacheUnavailable) => void
}

export class RedisReplayCache implements ReplayCache {
  readonly #prefix: string
  readonly #sliceMs: number
  readonly #legacyPrefix: string | undefined
  readonly #legacyUntil: number
  /** Claims made during this turn of the event loop, sent together (see claim). */
  #pending: PendingClaim[] = []

  /** The client is shared and owned by the caller: close() leaves it open. */
  constructor(
    readonly client: RedisClient,
    options: RedisReplayCacheOptions = {},
  ) {
    this.#prefix = options.prefix ?? 'kr:{s}:'
    this.#sliceMs = options.sliceMs ?? defaultSliceMs
    if (!Number.isInteger(this.#sliceMs) || this.#sliceMs <= 0) throw new RangeError(`sliceMs must be a positive integer, got ${this.#sliceMs}`)
    this.#legacyPrefix = options.legacyPrefix
    this.#legacyUntil = options.legacyPrefix === undefined ? 0 : (options.legacyUntil ?? 0)
    if (!(claimCommand in client)) {
      client.defineCommand(claimCommand, { lua: claimScript })
      // The claims are already gathered per turn: the client's auto-pipelining would only
      // wrap each script in a pipeline of its own (an object, a promise and a turn of
      // bookkeeping per script), so the script is sent as it is.
      const ignored = client.options.autoPipeliningIgnoredCommands ?? []
      client.options.autoPipeliningIgnoredCommands = [...ignored, claimCommand]
    }
  }

  /**
   * The claims of all requests verified in one turn of the event loop leave together when
   * the turn ends, as one script (claimScript) that checks and adds each in order: under
   * load that is several claims per command, and no added wait; one round trip per turn.
   * Against a pipeline of one SET per claim (bench/micro/replay-batching.ts, CPU per claim,
   * 12 callers, local Redis; docs/performance.md#nonce-claims-as-one-script-per-turn): 5.8
   * against 10.1 µs in this process; ioredis' work per command (its object, timer, promise
   * and answer) is done once per turn instead of once per claim.
   */
  claim(key: string, ttlSeconds: number): Promise<boolean> {
    const ttl = wholeSeconds(ttlSeconds)
    return new Promise<boolean>((resolve, reject) => {
      if (this.#pending.push({ key, ttl, resolve, reject }) === 1) setImmediate(() => this.#flush())
    })
  }

  /** The prefix of the earlier key shape while it is still claimed, else undefined. */
  #legacy(): string | undefined {
    return this.#legacyPrefix !== undefined && Date.now() < this.#legacyUntil ? this.#legacyPrefix : undefined
  }

  #flush(): void {
    const batch = this.#pending
    this.#pending = []
    const legacy = this.#legacy()
    for (let start = 0; start < batch.length; start += maxClaimsPerScript) {
      const claims = batch.slice(start, start + maxClaimsPerScript)
      this.#claimScripted(claims, legacy).then(
        (claimed) => {
          for (let i = 0; i < claims.length; i++) claims[i]!.resolve(claimed[i]!)
        },
        (err: unknown) => {
          for (const c of claims) c.reject(unavailable(err))
        },
      )
    }
  }

  /**
   * One script for the claims. A Cluster keeps the earlier shape's keys in other slots
   * than the sets, so there they are set after the script, one command each, for the
   * claims it granted: a nonce is granted only to whoever adds its member and sets that
   * key, so of two gateways racing for it at most one wins, whichever version each runs.
   */
  async #claimScripted(claims: PendingClaim[], legacy: string | undefined): Promise<boolean[]> {
    const n = claims.length
    const inScript = legacy !== undefined && !this.client.isCluster
    const keys = inScript ? 1 + n : 1
    const args = new Array<Buffer | string | number>(keys + 1 + 2 * n)
    args[0] = this.#prefix
    args[keys] = this.#sliceMs
    for (let i = 0; i < n; i++) {
      const { key, ttl } = claims[i]!
      const member = storedMember(key)
      if (inScript) args[1 + i] = legacyStoredKey(legacy, key)
      args[keys + 1 + i] = member
      args[keys + 1 + n + i] = ttl
    }
    const claimed = (await (this.client as RedisClient & ClaimCommand)[claimCommand](keys, ...args)).map((c) => c === 1)
    if (legacy === undefined || inScript) return claimed
    return Promise.all(
      claimed.map(async (granted, i) => granted && (await this.client.set(legacyStoredKey(legacy, claims[i]!.key), '1', 'EX', claims[i]!.ttl, 'NX')) === 'OK'),
    )
  }

  async ping(): Promise<void> {
    try {
      await this.client.ping()
    } catch (err) {
      throw unavailable(err)
    }
  }

  async close(): Promise<void> {}
}
