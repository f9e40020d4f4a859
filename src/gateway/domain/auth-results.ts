// Building AuthResults, and the nonce claim shared by WSSE and OAuth (docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a, docs/operations.md#dependability).
import { errors, failureResponse, type ErrorCode } from '../../common/errors.js'
import type { AuthMethod } from '../../common/identity.js'
import { ReplayCacheUnavailable, ReplayClientQuotaExceeded, type ReplayCache } from '../replay/types.js'
import type { AuthFailure, Outcome } from './auth.js'

export type { AuthFailure }

export function failure(
  method: AuthMethod,
  status: AuthFailure['status'],
  code: ErrorCode,
  message: string,
  outcome: Outcome,
  extra: Pick<AuthFailure, 'oauthProblem' | 'attemptedUser' | 'retryAfterSeconds' | 'headers'> = {},
): AuthFailure {
  return { kind: 'fail', method, status, code, message, outcome, ...extra }
}

/** Default Retry-After when the replay cache cannot answer. */
export const defaultRetryAfterSeconds = 5

/**
 * Claims a nonce once its request has verified. Returns null when the nonce was fresh,
 * `replayed` when it was used before, and a 503 when the cache is unavailable (docs/operations.md#dependability:
 * fail closed; a caller that wants the in-process fallback passes that cache instead).
 */
export async function claimNonce(
  replay: ReplayCache,
  key: string,
  ttlSeconds: number,
  method: AuthMethod,
  retryAfterSeconds: number,
  replayed: () => AuthFailure,
  client?: string,
): Promise<AuthFailure | null> {
  try {
    return (await replay.claim(key, ttlSeconds, client)) ? null : replayed()
  } catch (err) {
    // This client alone holds too many nonces of an in-process cache: it waits, others don't.
    if (err instanceof ReplayClientQuotaExceeded) {
      return failure(method, 429, 'too_many_requests', 'Too many requests with fresh nonces from this client; slow down', 'throttled', { retryAfterSeconds: Math.min(ttlSeconds, 60) })
    }
    if (!(err instanceof ReplayCacheUnavailable)) throw err
    const answer = failureResponse(err, {
      unavailable: () => errors.unavailable('replay_cache_unavailable', 'The replay cache is unavailable; try again shortly', retryAfterSeconds),
      internalMessage: 'Internal error',
    })
    return failure(method, answer.status as AuthFailure['status'], answer.code, answer.message, 'unavailable', { retryAfterSeconds })
  }
}
