// The gateway's steps as spans when tracing is on (docs/operations.md#traces): the replay
// claim and the migration policy, wrapped where server.ts builds the app's dependencies,
// so that the verifiers know nothing of tracing. With tracing off nothing is wrapped.
import { usageMethodOf } from './policy/types.js'
import type { AppTracing } from '../common/tracing.js'
import type { LegacyPolicyCheck } from './policy/service.js'
import type { ReplayCache } from './replay/types.js'

/** Each claim as a `kigo.replay.claim` span: whether the nonce was fresh, never the nonce. */
function tracedCache(cache: ReplayCache, method: string, tracing: AppTracing): ReplayCache {
  return {
    claim: (key, ttlSeconds, client) =>
      tracing.step(null, 'kigo.replay.claim', () => cache.claim(key, ttlSeconds, client), (fresh) => ({ 'kigo.auth.method': method, 'kigo.replay.fresh': fresh })),
    ping: () => cache.ping(),
    close: () => cache.close(),
  }
}

export function tracedReplay(replay: { oauth: ReplayCache; wsse: ReplayCache }, tracing: AppTracing): { oauth: ReplayCache; wsse: ReplayCache } {
  return { oauth: tracedCache(replay.oauth, 'oauth', tracing), wsse: tracedCache(replay.wsse, 'wsse', tracing) }
}

/**
 * Each check as a `kigo.policy` span: the credential method (`oauth` for OAuth 1.0a), the
 * policy method (`oauth1`), the state in force and the verdict.
 */
export function tracedPolicy(policy: LegacyPolicyCheck, tracing: AppTracing): LegacyPolicyCheck {
  return {
    check: (method, user, req, application) =>
      tracing.stepSync('kigo.policy', () => policy.check(method, user, req, application), (verdict) => ({ 'kigo.auth.method': usageMethodOf(method), 'kigo.policy.method': method, 'kigo.policy.state': verdict.state, 'kigo.policy.allowed': verdict.allowed })),
  }
}
