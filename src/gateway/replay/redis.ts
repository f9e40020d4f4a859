// The shared replay cache (SPEC §1.1 production, §4.3, §4.4): one `SET key 1 NX EX ttl`
// per claim, so two gateways on one Redis reject a nonce used at the other. Any error or
// timeout becomes ReplayCacheUnavailable; the client (src/common/redis.ts) fails fast
// while Redis is away, so a claim never hangs.
import type { RedisClient } from '../../common/redis.js'
import { hashKey, wholeSeconds } from './key.js'
import { ReplayCacheUnavailable, type ReplayCache } from './types.js'

export interface RedisReplayCacheOptions {
  /** Prefix of every key; default `kigo:replay:` (tests use a random one). */
  prefix?: string
}

export class RedisReplayCache implements ReplayCache {
  readonly #prefix: string

  /** The client is shared and owned by the caller: close() leaves it open. */
  constructor(
    readonly client: RedisClient,
    options: RedisReplayCacheOptions = {},
  ) {
    this.#prefix = options.prefix ?? 'kigo:replay:'
  }

  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    const ttl = wholeSeconds(ttlSeconds)
    let reply: string | null
    try {
      reply = await this.client.set(this.#prefix + hashKey(key), '1', 'EX', ttl, 'NX')
    } catch (err) {
      throw new ReplayCacheUnavailable(`replay cache unavailable: ${(err as Error).message}`, { cause: err })
    }
    return reply === 'OK'
  }

  async ping(): Promise<void> {
    try {
      await this.client.ping()
    } catch (err) {
      throw new ReplayCacheUnavailable(`replay cache unavailable: ${(err as Error).message}`, { cause: err })
    }
  }

  async close(): Promise<void> {}
}
