// The one place where authentication results become responses (STYLE: Kong's model).
// Each verifier parses, loads the secret through the cache, verifies and returns an
// AuthResult; this module picks the verifier, applies throttling (docs/operations.md#throttling) and scopes
// (docs/gateway.md#which-credentials-each-operation-accepts), and builds the challenges of docs/gateway.md#challenges.
// Every credential is verified on the one asynchronous path: a synchronous twin measured
// no gain worth its second path (docs/performance.md#one-path-per-authentication-decision).
// What the credentials alone decide (none on an anonymous route, two kinds, an unknown
// scheme) is decided at once (`triage`), with nothing to wait for.
import type { Config } from '../../common/config.js'
import { ApiError } from '../../common/errors.js'
import type { AuthMethod, Identity } from '../../common/identity.js'
import { detectCredentials, unknownAuthorizationScheme } from './detect.js'
import { percentEncode } from './oauth/percent-encode.js'
import { basicVerifier } from './basic.js'
import { wsseVerifier } from './wsse.js'
import { oauthVerifier } from './oauth/verify.js'
import { collectOAuthParameters, oauthSchemeEnd, singleHeader } from './oauth/parameters.js'
import type { SignatureAdviceOptions } from './oauth/advice.js'
import type { AuthRequest, AuthResult, CredentialLookup, CredentialVerifier, Outcome } from '../domain/auth.js'
import { noPolicyHeaders, type LegacyPolicyCheck } from '../policy/service.js'
import type { ReplayCache } from '../replay/types.js'
import type { RoutePolicy } from '../domain/routes.js'
import type { AttemptThrottle } from '../throttle/attempts.js'

export interface Authenticator {
  /** The decision on a request by a route's rules (which may wait for the store and Redis): `triage`, then `verify`. */
  authenticate(req: AuthRequest, route: RoutePolicy, clientIp: string): Promise<AuthDecision>
  /** What the request's credentials decide without verifying anything: the decision, or the method whose credential must be verified. */
  triage(req: AuthRequest, route: RoutePolicy): AuthDecision | AuthMethod | 'oauth2'
  /** The decision on the credential of `method` that triage named (which may wait for the store and Redis). */
  verify(method: AuthMethod | 'oauth2', req: AuthRequest, route: RoutePolicy, clientIp: string): Promise<AuthDecision>
}

/** `clientId`: the application (consumer key) of a verified OAuth 1.0a request, for its usage row. */
export type AuthDecision =
  | { ok: true; method: AuthMethod | 'oauth2' | 'none'; identity: Identity | null; outcome: 'ok' | 'ignored_credentials'; headers?: Record<string, string>; clientId?: string }
  | { ok: false; method: AuthMethod | 'oauth2' | 'none'; error: ApiError; outcome: Outcome; user?: string; clientId?: string }

/** A verifier's result, or the throttle's refusal before it ran. */
type VerifierResult = AuthResult | { kind: 'throttled'; wait: number; user?: string } | { kind: 'locked'; user: string }

export interface AuthenticatorDeps {
  auth: Config['auth']
  lookup: CredentialLookup
  replay: { oauth: ReplayCache; wsse: ReplayCache }
  throttle: AttemptThrottle
  /** The migration policy (docs/gateway.md#the-migration-policy), asked after a Basic or WSSE credential verified. */
  policy?: LegacyPolicyCheck
  /** The deployments' public hosts, tried when explaining a failed OAuth signature. */
  publicHosts?: readonly string[]
  /** OAuth 2.0 access tokens (`Authorization: Bearer`, docs/oauth2.md#calling-the-api); without it Bearer is a scheme no verifier knows. */
  bearer?: BearerAuthenticator
}

/** Where a request offers an OAuth 2.0 access token: the header, or a place it may not be. */
export type BearerOffer = 'header' | 'misplaced'

/**
 * OAuth 2.0 access tokens on the API (`Authorization: Bearer`, docs/oauth2.md#calling-the-api),
 * verified at the gateway: offered by the oauth2 feature (`Provisions.bearer`).
 */
export interface BearerAuthenticator {
  /** Whether (and where) the request offers an access token; null when it offers none. */
  offered(req: AuthRequest): BearerOffer | null
  /** The decision on a request that offered one, by the route's rules. */
  decide(req: AuthRequest, route: RoutePolicy, offer: BearerOffer): Promise<AuthDecision>
}

function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`
}

/** The RFC 6750 §3 challenge. */
export function bearerChallenge(realm: string, params: Record<string, string> = {}): string {
  return [`Bearer realm=${quote(realm)}`, ...Object.entries(params).map(([k, v]) => `${k}=${quote(v)}`)].join(', ')
}

/** One WWW-Authenticate challenge per method the route accepts (docs/gateway.md#challenges). */
export function challenges(realm: string, methods: AuthMethod[], oauthProblem?: Record<string, string>): string[] {
  return methods.map((m) => {
    if (m === 'basic') return `Basic realm=${quote(realm)}, charset="UTF-8"`
    if (m === 'wsse') return `WSSE realm=${quote(realm)}, profile="UsernameToken"`
    // OAuth Problem Reporting: parameter values are percent-encoded like every OAuth value.
    const extra = oauthProblem ? Object.entries(oauthProblem).map(([k, v]) => `, ${k}="${percentEncode(v)}"`).join('') : ''
    return `OAuth realm=${quote(realm)}${extra}`
  })
}

/** What a failed signature may say (advice.ts): the base string header is on in embedded mode by default. */
export function signatureAdviceOptions(auth: Config['auth'], hosts: readonly string[]): SignatureAdviceOptions {
  return { hosts, exposeBaseString: auth.signatureBaseStringHeader ?? false }
}

/** True when the request's OAuth parameters are all in its Authorization header and name no (or an empty) oauth_token. */
function namesNoToken(req: AuthRequest): boolean {
  const authorization = singleHeader(req.headers, 'authorization')
  if (typeof authorization !== 'string' || oauthSchemeEnd(authorization) === -1) return false
  // The usual signed request names its token plainly: verified without a second parse.
  // (A header that only seems to is verified too, which is what it would be anyway.)
  if (/oauth_token="[^"]/.test(authorization)) return false
  const collected = collectOAuthParameters(req)
  if (!collected.ok) return false
  const { source, protocol } = collected.params
  return (source === 'header' || source === null) && (protocol.get('oauth_token') ?? '') === ''
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { auth, lookup, replay, throttle } = deps
  const realm = auth.realm

  const fail = (method: AuthMethod | 'none', outcome: Outcome, error: ApiError, user?: string): AuthDecision => ({ ok: false, method, outcome, error, ...(user ? { user } : {}) })

  // One verifier per method, made once: the same pipeline for each (domain/auth.ts).
  const verifiers: Record<AuthMethod, CredentialVerifier> = {
    basic: basicVerifier(lookup),
    wsse: wsseVerifier(lookup, replay.wsse, { windowSeconds: auth.wsseWindowSeconds }),
    oauth: oauthVerifier(lookup, replay.oauth, {
      windowSeconds: auth.timestampWindowSeconds,
      hmacSha256: auth.hmacSha256,
      plaintext: auth.plaintext,
      advice: signatureAdviceOptions(auth, deps.publicHosts ?? []),
    }),
  }

  /**
   * Reads the credential and verifies it. A guessable one (Basic, WSSE) is throttled
   * (docs/operations.md#throttling): the user it claims is checked before verifying, so a
   * locked-out user cannot learn the right password, and a failure is counted, even one
   * that failed before the lookup (a malformed credential counts against the address).
   */
  const verify = async (verifier: CredentialVerifier, req: AuthRequest, clientIp: string): Promise<VerifierResult> => {
    const read = verifier.read(req)
    if (!verifier.guessable) return 'kind' in read ? read : read.verify()
    const user = 'kind' in read ? undefined : read.claimedUser
    const attempt = { realm: 'api' as const, user, ip: clientIp }
    // An operator's lock refuses before anything is verified or counted.
    if (user !== undefined && throttle.locked?.(attempt) === true) return { kind: 'locked', user }
    // A client whose credentials keep verifying is cleared from the local views, at once.
    const wait = throttle.checkNow?.(attempt) ?? (await throttle.check(attempt))
    if (wait > 0) return { kind: 'throttled', wait, ...(user ? { user } : {}) }
    const result = 'kind' in read ? read : await read.verify()
    if (result.kind === 'ok') {
      // Bookkeeping of a success (throttle/attempts.ts), which is not the request's to wait for.
      throttle.succeeded({ realm: 'api', user: result.principal.userId, ip: clientIp }).catch(() => undefined)
      return result
    }
    // A failure names the user the credential claimed, even when it failed before the lookup.
    const attemptedUser = result.attemptedUser ?? user
    if (result.status === 401) await throttle.failed({ realm: 'api', user: attemptedUser, ip: clientIp })
    return attemptedUser === undefined ? result : { ...result, attemptedUser }
  }

  /** The credential method to verify, or the decision when there is nothing to verify. */
  const triage = (req: AuthRequest, route: RoutePolicy): AuthDecision | AuthMethod | 'oauth2' => {
    const kinds = detectCredentials(req)
    // A scheme no verifier knows (Bearer, Digest, Negotiate…) is a credential too: beside
    // another kind it is a second credential, never ignored (docs/security.md#request-edges).
    const unknown = unknownAuthorizationScheme(req)
    if (kinds.length > 1 || (kinds.length === 1 && unknown !== null)) {
      const named = unknown === null ? kinds.join(' and ') : `${kinds[0]!} and an Authorization header of another scheme`
      // A Bearer token beside other credentials is also RFC 6750's invalid_request.
      const bearer = unknown === 'bearer' && deps.bearer ? { 'www-authenticate': bearerChallenge(realm, { error: 'invalid_request' }) } : undefined
      return fail('none', 'malformed', new ApiError(400, 'multiple_credentials', `Send one kind of credentials, not ${named}`, bearer))
    }
    // An OAuth 2.0 access token, in the header or where it may not be (refused there).
    if (deps.bearer && deps.bearer.offered(req) !== null) return 'oauth2'
    const method = kinds[0]
    if (method === undefined) {
      // Present credentials are always verified: a scheme no verifier knows is refused
      // rather than ignored, on every route, anonymous ones included.
      if (unknown !== null) {
        return fail('none', 'malformed', new ApiError(401, 'unsupported_credentials', `The ${unknown} authorization scheme is not accepted; use ${route.methods.join(', ')}`, { 'www-authenticate': challenges(realm, route.methods) }))
      }
      if (route.anonymous) return { ok: true, method: 'none', identity: null, outcome: 'ok' }
      return fail('none', 'bad_credentials', new ApiError(401, 'authentication_required', 'This operation requires authentication', { 'www-authenticate': challenges(realm, route.methods) }))
    }
    // An OAuth header that names no token is no user's credential (one client library signs
    // even public reads, with an empty consumer): on a route open to anonymous requests it
    // is answered as anonymous (docs/api-differences.md#ignored-credentials). Only a header
    // that is the one place of the protocol parameters, parsed as verification parses it;
    // anything else is verified as always.
    if (method === 'oauth' && route.anonymous && namesNoToken(req)) {
      return { ok: true, method: 'none', identity: null, outcome: 'ignored_credentials' }
    }
    if (!route.methods.includes(method)) {
      return fail(method, 'bad_credentials', new ApiError(401, 'method_not_accepted', `This operation does not accept ${method} credentials; use ${route.methods.join(', ')}`, { 'www-authenticate': challenges(realm, route.methods) }))
    }
    return method
  }

  /** The decision a verifier's result makes: scopes (docs/gateway.md#which-credentials-each-operation-accepts) and the migration policy (docs/gateway.md#the-migration-policy) applied. */
  const conclude = (method: AuthMethod, result: VerifierResult, req: AuthRequest, route: RoutePolicy): AuthDecision => {
    if (result.kind === 'locked') {
      return fail(method, 'throttled', new ApiError(403, 'account_locked', "This user's passwords are locked by the operator; OAuth access tokens keep working"), result.user)
    }
    if (result.kind === 'throttled') {
      return fail(method, 'throttled', new ApiError(429, 'too_many_requests', 'Too many failed attempts; try again later', { 'retry-after': String(result.wait) }), result.user)
    }
    if (result.kind === 'fail') {
      const headers: Record<string, string | string[]> = {}
      if (result.status === 401) headers['www-authenticate'] = challenges(realm, route.methods, method === 'oauth' ? { oauth_problem: result.code, ...result.oauthProblem } : undefined)
      else if (method === 'oauth' && result.status === 400) headers['www-authenticate'] = challenges(realm, ['oauth'], { oauth_problem: result.code, ...result.oauthProblem })
      if (result.retryAfterSeconds !== undefined) headers['retry-after'] = String(result.retryAfterSeconds)
      if (result.headers) Object.assign(headers, result.headers)
      return fail(method, result.outcome, new ApiError(result.status, result.code, result.message, headers), result.attemptedUser)
    }

    const p = result.principal
    if (method === 'oauth' && route.scopes.length > 0 && !route.scopes.some((s) => p.scopes.includes(s))) {
      const needed = route.scopes.join(' or ')
      return fail(method, 'scope_denied', new ApiError(403, 'additional_authorization_required', `This token lacks the scope this operation needs (${needed})`, {
        'www-authenticate': challenges(realm, ['oauth'], { oauth_problem: 'additional_authorization_required' }),
      }), p.userId)
    }
    // ---- migration policy (docs/gateway.md#the-migration-policy): verified legacy requests only.
    // OAuth 1.0a requests (method oauth) are governed by the policy method oauth1, whose
    // exceptions may name the application that signed them.
    let headers: Record<string, string> | undefined
    if (deps.policy) {
      const verdict = method === 'oauth' ? deps.policy.check('oauth1', p.userId, req, p.consumerKey) : deps.policy.check(method, p.userId, req)
      if (!verdict.allowed) {
        return { ...fail(method, 'policy_denied', new ApiError(verdict.status, verdict.code, verdict.message, verdict.headers), p.userId), ...(method === 'oauth' && p.consumerKey ? { clientId: p.consumerKey } : {}) }
      }
      if (verdict.headers !== noPolicyHeaders && Object.keys(verdict.headers).length > 0) headers = verdict.headers
    }
    // ---- end migration policy
    // An OAuth 1.0a request's usage row names its application (consumer key): the oauth1
    // notices go to the application's owner (docs/gateway.md#oauth-10a-as-a-legacy-method).
    if (method === 'oauth' && p.consumerKey) {
      return { ok: true, method, outcome: 'ok', identity: { user: p.userId, userName: p.userName, authMethod: method, consumer: p.consumerKey, scopes: p.scopes }, clientId: p.consumerKey, ...(headers ? { headers } : {}) }
    }
    return {
      ok: true,
      method,
      outcome: 'ok',
      identity: { user: p.userId, userName: p.userName, authMethod: method, consumer: p.consumerKey, scopes: p.scopes },
      ...(headers ? { headers } : {}),
    }
  }

  const verified = async (method: AuthMethod | 'oauth2', req: AuthRequest, route: RoutePolicy, clientIp: string): Promise<AuthDecision> => {
    if (method === 'oauth2') {
      const offer = deps.bearer?.offered(req) ?? null
      if (offer === null) throw new Error('verify(oauth2) without an OAuth 2.0 access token')
      return deps.bearer!.decide(req, route, offer)
    }
    return conclude(method, await verify(verifiers[method], req, clientIp), req, route)
  }
  return {
    async authenticate(req, route, clientIp) {
      const method = triage(req, route)
      return typeof method === 'string' ? verified(method, req, route, clientIp) : method
    },
    triage,
    verify: verified,
  }
}
