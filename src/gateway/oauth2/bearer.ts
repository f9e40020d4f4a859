// `Authorization: Bearer <access token>` on the API (RFC 6750 §2.1, docs/oauth2.md#calling-the-api):
// the same pipeline as the other methods (read, verify, principal), answered with the
// errors of RFC 6750 §3. The token is verified here, on this gateway (access-token.ts); the
// core is forwarded the same identity an OAuth 1.0a token of the same user and scopes
// gives (method `oauth`, the client's client_id as the consumer), so the core's own check
// of the operation's scope applies unchanged. Everything else counts it as `oauth2`.
//
// Refused, so that the core and the gateway can never read a request differently:
// - the token anywhere but the Authorization header: `access_token` in the query or in a
//   form body (RFC 6750 §2.2, §2.3) is 400 `invalid_request`, on every route, anonymous
//   ones included, and whatever else the request carries;
// - any header that is not exactly `Bearer`, one space, a b64token (RFC 6750 §2.1) and
//   nothing after it: 400 `invalid_request`. The scheme's case is free (RFC 9110 §11.1),
//   as it is for Basic, WSSE and OAuth;
// - two Authorization headers, or a Bearer token beside OAuth 1.0a, Basic or WSSE
//   credentials: the gateway's rule for two credentials (authenticate.ts, authentication.ts).
import { LRUCache } from 'lru-cache'
import { ApiError } from '../../common/errors.js'
import { baseUrl, deploymentMatcher, type Hosts } from '../../common/deployment.js'
import { isFormContentType } from '../../common/formats.js'
import { percentDecode } from '../auth/oauth/percent-encode.js'
import { bearerChallenge, challenges, type AuthDecision, type BearerAuthenticator } from '../auth/authenticate.js'
import type { AuthRequest } from '../domain/auth.js'
import type { User } from '../store/types.js'
import type { AccessTokenVerifier } from './access-token.js'

export interface BearerDeps {
  realm: string
  hosts: Hosts
  verifier: Pick<AccessTokenVerifier, 'verify'>
  users: { getUser(id: string): Promise<Pick<User, 'id' | 'name'> | null> }
  /** How long a user's name is kept between look-ups, ms (default 10 s). */
  userCacheMs?: number
}

/** `Bearer` (any case), one space, a b64token (RFC 6750 §2.1), nothing else. */
const bearerHeader = /^bearer ([A-Za-z0-9\-._~+/]+=*)$/i
/** Longer than any access token the provider issues, by far. */
const maxTokenLength = 8192

/** Whether urlencoded text names an `access_token` parameter (its name decoded as a form decodes it). */
function namesAccessToken(text: string): boolean {
  for (const pair of text.split('&')) {
    const end = pair.indexOf('=')
    let name = end === -1 ? pair : pair.slice(0, end)
    if (name.includes('%') || name.includes('+')) name = percentDecode(name, true) ?? ''
    if (name === 'access_token') return true
  }
  return false
}

function authorizationOf(req: AuthRequest): string | undefined {
  const raw = req.headers['authorization']
  return Array.isArray(raw) ? raw[0] : raw
}

export function bearerAuthenticator(deps: BearerDeps): BearerAuthenticator {
  const { realm } = deps
  const deploymentOf = deploymentMatcher(deps.hosts)
  const names = new LRUCache<string, { name: string | null }>({ max: 10_000, ttl: deps.userCacheMs ?? 10_000 })

  const refuse = (status: 400 | 401 | 403, code: 'invalid_request' | 'invalid_token' | 'insufficient_scope', message: string, extra: Record<string, string> = {}, user?: string): AuthDecision => ({
    ok: false,
    method: 'oauth2',
    outcome: status === 400 ? 'malformed' : status === 403 ? 'scope_denied' : 'bad_credentials',
    error: new ApiError(status, code, message, { 'www-authenticate': bearerChallenge(realm, { error: code, error_description: message, ...extra }) }),
    ...(user ? { user } : {}),
  })
  const invalidToken = () => refuse(401, 'invalid_token', 'The access token is not valid for this API: expired, revoked, or issued for another deployment or resource')

  const userName = async (id: string): Promise<string | null> => {
    const cached = names.get(id)
    if (cached) return cached.name
    const user = await deps.users.getUser(id)
    names.set(id, { name: user?.name ?? null })
    return user?.name ?? null
  }

  return {
    offered(req) {
      const q = req.url.indexOf('?')
      if (q !== -1 && namesAccessToken(req.url.slice(q + 1))) return 'misplaced'
      if (req.body !== undefined && isFormContentType(req.contentType) && namesAccessToken(req.body.toString('latin1'))) return 'misplaced'
      const authorization = authorizationOf(req)
      if (authorization === undefined) return null
      let end = 0
      while (end < authorization.length && authorization.charCodeAt(end) !== 32 && authorization.charCodeAt(end) !== 9) end++
      return authorization.slice(0, end).toLowerCase() === 'bearer' ? 'header' : null
    },

    async decide(req, route, offer) {
      if (offer === 'misplaced') return refuse(400, 'invalid_request', 'Send the access token in the Authorization header (Authorization: Bearer <token>), never in the URL or the form body')
      const found = bearerHeader.exec(authorizationOf(req) ?? '')
      if (!found || found[1]!.length > maxTokenLength) return refuse(400, 'invalid_request', 'Send one access token as "Authorization: Bearer <token>": the scheme, one space, the token, nothing else')
      if (!route.methods.includes('oauth')) {
        return {
          ok: false,
          method: 'oauth2',
          outcome: 'bad_credentials',
          error: new ApiError(401, 'method_not_accepted', `This operation does not accept OAuth 2.0 access tokens; use ${route.methods.join(', ')}`, { 'www-authenticate': challenges(realm, route.methods) }),
        }
      }
      const deployment = deploymentOf(req.host)
      if (deployment === null) return invalidToken()
      const verified = await deps.verifier.verify(found[1]!, baseUrl(deps.hosts, deployment))
      if (!verified.ok) return invalidToken()
      const token = verified.token
      const name = await userName(token.userId)
      if (name === null) return invalidToken()
      if (route.scopes.length > 0 && !route.scopes.some((s) => token.scopes.includes(s))) {
        return refuse(403, 'insufficient_scope', `This token lacks the scope this operation needs (${route.scopes.join(' or ')})`, { scope: route.scopes.join(' ') }, token.userId)
      }
      return {
        ok: true,
        method: 'oauth2',
        outcome: 'ok',
        identity: { user: token.userId, userName: name, authMethod: 'oauth', consumer: token.clientId, scopes: token.scopes },
      }
    },
  }
}
