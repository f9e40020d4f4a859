// What the provider endpoints share with the resource verifier (docs/gateway.md#oauth-10a): the request
// as a verifier sees it, and failures reported per the OAuth Problem Reporting extension
// exactly as the gateway reports them for API requests (authenticate.ts): the problem
// as the error code, and a `WWW-Authenticate: OAuth realm, oauth_problem` challenge.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError, type ErrorCode } from '../../common/errors.js'
import { toAuthRequest } from '../plugins/authentication.js'
import { challenges } from '../auth/authenticate.js'
import { oauthFailure } from '../auth/oauth/verify.js'
import type { AuthFailure } from '../domain/auth-results.js'
import type { AuthRequest } from '../domain/auth.js'

/** The request in the verifiers' terms (public host and scheme, raw form body). */
export function authRequestOf(app: FastifyInstance, request: FastifyRequest, now: number): AuthRequest {
  const origin = app.publicOrigin(request)
  request.origin = origin
  return toAuthRequest(request, origin, now)
}

/** The error a failed verification step is answered with. */
export function problemError(realm: string, f: AuthFailure): ApiError {
  const headers: Record<string, string | string[]> = {}
  if (f.status === 400 || f.status === 401 || f.status === 403) {
    headers['www-authenticate'] = challenges(realm, ['oauth'], { oauth_problem: f.code, ...f.oauthProblem })
  }
  if (f.retryAfterSeconds !== undefined) headers['retry-after'] = String(f.retryAfterSeconds)
  if (f.headers) Object.assign(headers, f.headers)
  return new ApiError(f.status, f.code, f.message, headers)
}

/** A problem raised by the provider's own rules (callback, scope, token state). */
export function problem(realm: string, status: AuthFailure['status'], code: ErrorCode, message: string, extra?: Record<string, string>): ApiError {
  return problemError(realm, oauthFailure(status, code, message, status === 400 ? 'malformed' : 'bad_credentials', extra))
}
