// The shared replay cache (docs/operations.md#modes production, docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a): one `SET key 1 NX EX ttl`
// per claim (the claims of one event-loop turn sent as one script, see claim), so two
// gateways on one Redis reject a nonce used at the other. Any error or timeout becomes
// ReplayCacheUnavailable; the client (src/common/redis.ts) fails fast while Redis is
// away, so a claim never hangs.
//
// What one claim costs Redis (docs/performance.md#the-replay-cache-in-redis): its key is
// the prefix and the first `storedDigestBytes` bytes of the SHA-256 of the caller's key,
// raw; with the gateway's 5-byte prefixes that is 14 bytes, the longest key Redis keeps in
// its smallest allocation. The value `1` is one of Redis' shared integers, stored nowhere
// (an empty string would take an object of its own). 72 bits keep the keys apart: among
// the 3 million nonces of a busy window the chance that two collide is about 10^-9, and a
// collision could only refuse one fresh request as a replay, never admit a replayed one.
//
// Keys of the earlier shape (prefix + the whole digest in base64url) are claimed as well
// for a while after start (`legacyPrefix`, `legacyUntil`): during a rolling upgrade a
// nonce claimed at a gateway of either version is refused at the other (docs/gateway.md#the-replay-cache).
import type { RedisClient } from '../../common/redis.js'
import { keyDigest, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, type ReplayCache } from './types.js'

/** Bytes of the SHA-256 digest kept in a stored key. */
export const storedDigestBytes = 9

function unavailable(err: unknown): ReplayCacheUnavailable {
  return new ReplayCacheUnavailable(`replay cache unavailable: ${(err as Error).message}`, { cause: err })
}

export interface RedisReplayCacheOptions {
  /** Prefix of every key; default `kr:` (the gateway's are `kr:w:` and `kr:o:`; tests use a random one). */
  prefix?: string
  /** Prefix of the earlier key shape, claimed as well until `legacyUntil`; none by default. */
  legacyPrefix?: string
  /** Until when (epoch ms) keys of the earlier shape are claimed too; default never. */
  legacyUntil?: number
}

/** The stored key of a claim: the prefix and the first bytes of the key's digest. */
export function storedKey(prefix: string, key: string): Buffer {
  return Buffer.concat([Buffer.from(prefix), keyDigest(key).subarray(0, storedDigestBytes)])
}

/** The key the earlier versions stored for the same claim: the prefix and the whole digest in base64url. */
export function legacyStoredKey(legacyPrefix: string, key: string): string {
  return legacyPrefix + keyDigest(key).toString('base64url')
}

/**
 * The claims of one turn in one command: each key is its own `SET key 1 EX ttl NX`, in
 * order, with its own TTL (ARGV[i]), exactly as separate commands would answer; 1 where
 * the key was set (claimed), 0 where it was already there. Redis runs a script whole, so
 * no other client's command falls between two of its SETs, which changes no answer.
 * With twice as many keys as TTLs, KEYS[n + i] is claim i's key of the earlier shape, and
 * the claim holds only when neither shape was there.
 */
const claimScript = `local n = #ARGV
local legacy = #KEYS > n
local claimed = {}
for i = 1, n do
  if redis.call('SET', KEYS[i], '1', 'EX', ARGV[i], 'NX') and (not legacy or redis.call('SET', KEYS[n + i], '1', 'EX', ARGV[i], 'NX')) then claimed[i] = 1 else claimed[i] = 0 end
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
  [claimCommand](numberOfKeys: number, ...keysThenTtls: Array<Buffer | string | number>): Promise<number[]>
}

interface PendingClaim {
  key: string
  ttl: number
  resolve: (claimed: boolean) => void
  reject: (err: ReplayCacheUnavailable) => void
}

export class RedisReplayCache implements ReplayCache {
  readonly #prefix: string
  readonly #legacyPrefix: string | undefined
  readonly #legacyUntil: number
  /** Claims made during this turn of the event loop, sent together (see claim). */
  #pending: PendingClaim[] = []

  /** The client is shared and owned by the caller: close() leaves it open. */
  constructor(
    readonly client: RedisClient,
    options: RedisReplayCacheOptions = {},
  ) {
    this.#prefix = options.prefix ?? 'kr:'
    this.#legacyPrefix = options.legacyPrefix
    this.#legacyUntil = options.legacyPrefix === undefined ? 0 : (options.legacyUntil ?? 0)
    if (!client.isCluster && !(claimCommand in client)) {
      client.defineCommand(claimCommand, { lua: claimScript })
      // The claims are already gathered per turn: the client's auto-pipelining would only
      // wrap each script in a pipeline of its own (an object, a promise and a turn of
      // bookkeeping per script), so the script is sent as it is.
      const ignored = client.options.autoPipeliningIgnoredCommands ?? []
      client.options.autoPipeliningIgnoredCommands = [...ignored, claimCommand]
    }
  }

  /**
   * Each claim is its own atomic `SET NX EX`, but the claims of all requests verified in
   * one turn of the event loop leave together when the turn ends, as one script
   * (claimScript) that runs their SETs: under load that is several claims per command,
   * and no added wait. A Cluster spreads keys over nodes, so there each claim is sent on
   * its own.
   * Against the pipeline of one SET per claim it replaced (bench/micro/replay-batching.ts,
   * CPU per claim, 12 callers, local Redis; docs/performance.md#nonce-claims-as-one-script-per-turn): 4.8 against 12.0 µs
   * in this process, 6.0 against 5.5 µs in Redis; ioredis' work per command (its object,
   * timer, promise and answer) is now done once per turn instead of once per claim.
   */
  claim(key: string, ttlSeconds: number): Promise<boolean> {
    const ttl = wholeSeconds(ttlSeconds)
    if (this.client.isCluster) return this.#claimOne(key, ttl)
    return new Promise<boolean>((resolve, reject) => {
      if (this.#pending.push({ key, ttl, resolve, reject }) === 1) setImmediate(() => this.#flush())
    })
  }

  /** The prefix of the earlier key shape while it is still claimed, else undefined. */
  #legacy(): string | undefined {
    return this.#legacyPrefix !== undefined && Date.now() < this.#legacyUntil ? this.#legacyPrefix : undefined
  }

  /**
   * One claim as its own command. With the earlier shape as well, as two SETs one after the
   * other (a Cluster keeps the two keys on different nodes): a nonce is granted only to
   * whoever sets both, so of two gateways racing for it at most one wins, whichever
   * version each runs.
   */
  async #claimOne(key: string, ttl: number): Promise<boolean> {
    const legacy = this.#legacy()
    try {
      if ((await this.client.set(storedKey(this.#prefix, key), '1', 'EX', ttl, 'NX')) !== 'OK') return false
      return legacy === undefined || (await this.client.set(legacyStoredKey(legacy, key), '1', 'EX', ttl, 'NX')) === 'OK'
    } catch (err) {
      throw unavailable(err)
    }
  }

  #flush(): void {
    const batch = this.#pending
    this.#pending = []
    const legacy = this.#legacy()
    if (batch.length === 1 && legacy === undefined) {
      const only = batch[0]!
      this.#claimOne(only.key, only.ttl).then(only.resolve, only.reject)
      return
    }
    for (let start = 0; start < batch.length; start += maxClaimsPerScript) this.#claimScripted(batch.slice(start, start + maxClaimsPerScript), legacy)
  }

  #claimScripted(claims: PendingClaim[], legacy: string | undefined): void {
    const n = claims.length
    const keys = legacy === undefined ? n : 2 * n
    const args = new Array<Buffer | string | number>(keys + n)
    for (let i = 0; i < n; i++) {
      const { key, ttl } = claims[i]!
      args[i] = storedKey(this.#prefix, key)
      if (legacy !== undefined) args[n + i] = legacyStoredKey(legacy, key)
      args[keys + i] = ttl
    }
    ;(this.client as RedisClient & ClaimCommand)[claimCommand](keys, ...args).then(
      (claimed) => {
        for (let i = 0; i < n; i++) claims[i]!.resolve(claimed[i] === 1)
      },
      (err: unknown) => {
        for (const c of claims) c.reject(unavailable(err))
      },
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
