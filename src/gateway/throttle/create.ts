// Wiring for the gateway (SPEC §4.7): in memory in embedded mode, shared through Redis
// (failing open to in-process counting while Redis is away) in production.
import type { Config } from '../../common/config.js'
import type { RedisClient } from '../../common/redis.js'
import { CachedFailureThrottle } from './cached.js'
import { MemoryFailureThrottle } from './memory.js'
import { RedisFailureThrottle } from './redis.js'
import { ResilientFailureThrottle, type ResilientFailureThrottleOptions } from './resilient.js'
import type { FailureThrottle } from './types.js'

export function createFailureThrottle(
  auth: Config['auth'],
  redis: RedisClient | undefined,
  hooks: ResilientFailureThrottleOptions = {},
): FailureThrottle {
  const settings = auth.throttle
  if (!redis) return new MemoryFailureThrottle(settings)
  return new CachedFailureThrottle(new ResilientFailureThrottle(new RedisFailureThrottle(redis, settings), settings, hooks))
}
