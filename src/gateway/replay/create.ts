// Wiring for the gateway: one replay cache per nonce-checking method (docs/gateway.md#wsse-usernametoken WSSE,
// docs/gateway.md#oauth-10a OAuth). Embedded mode (no REDIS_URL) keeps them in memory; production shares them
// through Redis, with the per-method fallback policy of docs/operations.md#dependability.
// The hooks count Redis's failures only: an in-process cache cannot be unreachable, and its
// 503 when full of live nonces is a bound reached (docs/operations.md#replay-cache-bounds).
import type { Config } from '../../common/config.js'
import type { RedisClient } from '../../common/redis.js'
import { MemoryReplayCache } from './memory.js'
import { RedisReplayCache } from './redis.js'
import { ResilientReplayCache } from './resilient.js'
import type { ReplayCache, ReplayCacheUnavailable } from './types.js'

export interface ReplayCaches {
  wsse: ReplayCache
  oauth: ReplayCache
  close(): Promise<void>
}

/** Metric hooks; `method` lets the caller label its counters (a closed set). */
export interface ReplayCacheHooks {
  onError?: (err: ReplayCacheUnavailable, method: 'wsse' | 'oauth') => void
  onFailOpen?: (method: 'wsse' | 'oauth') => void
}

/**
 * How long after start the keys of the shape 0.1.0 stored (`kigo:replay:<method>:` and the
 * whole digest in base64url, a key per claim) are claimed beside the slice sets: a rolling upgrade that replaces
 * every gateway within this time lets no nonce be replayed across versions
 * (docs/gateway.md#the-replay-cache).
 */
export const legacyKeyShapeMs = 30 * 60_000

/**
 * The prefix of each method's slice sets in Redis. The braces are a hash tag: in a
 * Cluster every slice of a method lives in one slot, as the claim script requires
 * (redis.ts); `{` also keeps them apart from the earlier shape's keys.
 */
export const replaySetPrefix = (method: 'wsse' | 'oauth') => `kr:{${method === 'wsse' ? 'w' : 'o'}}:`

/** The prefix of each method's keys of the shape 0.1.0 stored, one key per claim. */
export const replayEarlierKeyPrefix = (method: 'wsse' | 'oauth') => `kigo:replay:${method}:`

export function createReplayCaches(auth: Config['auth'], redis: RedisClient | undefined, hooks: ReplayCacheHooks = {}, now: () => number = Date.now): ReplayCaches {
  const legacyUntil = Date.now() + legacyKeyShapeMs
  const make = (method: 'wsse' | 'oauth'): ReplayCache => {
    const memory = () => new MemoryReplayCache({ perClientMax: auth.replayPerClientMax, clients: auth.replayClients, now })
    if (!redis) return memory()
    const primary = new RedisReplayCache(redis, { prefix: replaySetPrefix(method), legacyPrefix: replayEarlierKeyPrefix(method), legacyUntil })
    return new ResilientReplayCache(primary, {
      fallback: memory(),
      policy: auth.replayFallback[method],
      onError: (err) => hooks.onError?.(err, method),
      onFailOpen: () => hooks.onFailOpen?.(method),
    })
  }
  const wsse = make('wsse')
  const oauth = make('oauth')
  return {
    wsse,
    oauth,
    close: async () => {
      await Promise.all([wsse.close(), oauth.close()])
    },
  }
}
