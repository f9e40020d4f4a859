// Wiring for the gateway (docs/operations.md#throttling): the rules of attempts.ts, each counted in memory in
// embedded mode, shared through Redis (failing open to in-process counting while Redis is
// away, counted) in production.
import type { Config } from '../../common/config.js'
import type { RedisClient } from '../../common/redis.js'
import { CachedFailureThrottle } from './cached.js'
import { MemoryFailureThrottle } from './memory.js'
import { RedisFailureThrottle } from './redis.js'
import { ResilientFailureThrottle, type ResilientFailureThrottleOptions } from './resilient.js'
import { KnownPairs, RuleAttemptThrottle, type AttemptThrottle, type RuleAttemptThrottleOptions } from './attempts.js'
import type { FailureThrottle, ThrottleSettings } from './types.js'

export function createFailureThrottle(
  auth: Config['auth'],
  redis: RedisClient | undefined,
  hooks: ResilientFailureThrottleOptions = {},
  rules: RuleAttemptThrottleOptions = {},
): AttemptThrottle {
  const t = auth.throttle
  const rule = (settings: ThrottleSettings): FailureThrottle => {
    if (!redis) return new MemoryFailureThrottle(settings)
    return new CachedFailureThrottle(new ResilientFailureThrottle(new RedisFailureThrottle(redis, settings), settings, hooks))
  }
  return new RuleAttemptThrottle({
    pair: rule({ maxFailures: t.maxFailures, windowSeconds: t.windowSeconds }),
    address: rule({ maxFailures: t.addressMaxFailures, windowSeconds: t.addressWindowSeconds }),
    user: rule({ maxFailures: t.userMaxFailures, windowSeconds: t.userWindowSeconds }),
    known: new KnownPairs(rule({ maxFailures: 1, windowSeconds: t.knownAddressDays * 86_400 })),
  }, Date.now, rules)
}
