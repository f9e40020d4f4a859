// Failure counting shared by all gateways through Redis (docs/operations.md#throttling "shared through Redis
// in production"). Each key is a counter whose window starts at its first failure: INCR
// and PEXPIRE run in one Lua script, so a counter can never be left without an expiry.
// One script call per key (not one multi-key call), so that it also works on a Cluster,
// where `user:…` and `ip:…` keys live in different slots.
import type { RedisClient } from '../../common/redis.js'
import { hashKey } from '../replay/key.js'
import { ThrottleUnavailable, type FailureThrottle, type ThrottleSettings } from './types.js'

const recordScript = `
local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

// Milliseconds left in the window when the key is at or past the threshold, else 0.
const checkScript = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n < tonumber(ARGV[1]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
return ttl`

export interface RedisFailureThrottleOptions extends ThrottleSettings {
  /** Prefix of every key; default `kigo:throttle:` (tests use a random one). */
  prefix?: string
}

export class RedisFailureThrottle implements FailureThrottle {
  readonly #prefix: string

  /** The client is shared and owned by the caller: close() leaves it open. */
  constructor(
    readonly client: RedisClient,
    readonly settings: RedisFailureThrottleOptions,
  ) {
    this.#prefix = settings.prefix ?? 'kigo:throttle:'
  }

  async #each<T>(keys: string[], run: (redisKey: string) => Promise<T>): Promise<T[]> {
    try {
      return await Promise.all(keys.map((key) => run(this.#prefix + hashKey(key))))
    } catch (err) {
      throw new ThrottleUnavailable(`throttle unavailable: ${(err as Error).message}`, { cause: err })
    }
  }

  async check(keys: string[]): Promise<number> {
    const waits = await this.#each(keys, (k) => this.client.eval(checkScript, 1, k, this.settings.maxFailures))
    return Math.max(0, ...waits.map((ms) => Math.ceil(Number(ms) / 1000)))
  }

  async recordFailure(keys: string[]): Promise<void> {
    await this.#each(keys, (k) => this.client.eval(recordScript, 1, k, this.settings.windowSeconds * 1000))
  }

  async reset(keys: string[]): Promise<void> {
    await this.#each(keys, (k) => this.client.del(k))
  }

  async close(): Promise<void> {}
}
