// The shared replay cache (docs/operations.md#modes production, docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a): one `SET key 1 NX EX ttl`
// per claim (the claims of one event-loop turn sent as one script, see claim), so two
// gateways on one Redis reject a nonce used at the other. Any error or timeout becomes
// ReplayCacheUnavailable; the client (src/common/redis.ts) fails fast while Redis is
// away, so a claim never hangs.
import type { RedisClient } from '../../common/redis.js'
import { hashKey, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, type ReplayCache } from './types.js'

function unavailable(err: unknown): ReplayCacheUnavailable {
  return new ReplayCacheUnavailable(`replay cache unavailable: ${(err as Error).message}`, { cause: err })
}

export interface RedisReplayCacheOptions {
  /** Prefix of every key; default `kigo:replay:` (tests use a random one). */
  prefix?: string
}

/**
 * The claims of one turn in one command: each key is its own `SET key 1 EX ttl NX`, in
 * order, with its own TTL (ARGV[i]), exactly as separate commands would answer; 1 where
 * the key was set (claimed), 0 where it was already there. Redis runs a script whole, so
 * no other client's command falls between two of its SETs, which changes no answer.
 */
const claimScript = `local claimed = {}
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'EX', ARGV[i], 'NX') then claimed[i] = 1 else claimed[i] = 0 end
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
  [claimCommand](numberOfKeys: number, ...keysThenTtls: Array<string | number>): Promise<number[]>
}

interface PendingClaim {
  key: string
  ttl: number
  resolve: (claimed: boolean) => void
  reject: (err: ReplayCacheUnavailable) => void
}

export class RedisReplayCache implements ReplayCache {
  readonly #prefix: string
  /** Claims made during this turn of the event loop, sent together (see claim). */
  #pending: PendingClaim[] = []

  /** The client is shared and owned by the caller: close() leaves it open. */
  constructor(
    readonly client: RedisClient,
    options: RedisReplayCacheOptions = {},
  ) {
    this.#prefix = options.prefix ?? 'kigo:replay:'
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
    const redisKey = this.#prefix + hashKey(key)
    const ttl = wholeSeconds(ttlSeconds)
    if (this.client.isCluster) return this.#claimOne(redisKey, ttl)
    return new Promise<boolean>((resolve, reject) => {
      if (this.#pending.push({ key: redisKey, ttl, resolve, reject }) === 1) setImmediate(() => this.#flush())
    })
  }

  async #claimOne(redisKey: string, ttl: number): Promise<boolean> {
    try {
      return (await this.client.set(redisKey, '1', 'EX', ttl, 'NX')) === 'OK'
    } catch (err) {
      throw unavailable(err)
    }
  }

  #flush(): void {
    const batch = this.#pending
    this.#pending = []
    if (batch.length === 1) {
      const only = batch[0]!
      this.#claimOne(only.key, only.ttl).then(only.resolve, only.reject)
      return
    }
    for (let start = 0; start < batch.length; start += maxClaimsPerScript) this.#claimScripted(batch.slice(start, start + maxClaimsPerScript))
  }

  #claimScripted(claims: PendingClaim[]): void {
    const n = claims.length
    const args = new Array<string | number>(2 * n)
    for (let i = 0; i < n; i++) {
      args[i] = claims[i]!.key
      args[n + i] = claims[i]!.ttl
    }
    ;(this.client as RedisClient & ClaimCommand)[claimCommand](n, ...args).then(
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
