// The token exchange (docs/oauth2.md#for-an-oauth-10a-application): an OAuth 1.0a
// application that turned OAuth 2.0 on trades each stored OAuth 1.0a access token for
// OAuth 2.0 tokens of the same user and scopes, without asking the user again.
//
// At the provider's token endpoint, grant_type urn:ietf:params:oauth:grant-type:token-exchange
// (RFC 8693) with the OAuth 1.0a access token as subject_token. The client authenticates as
// usual (HTTP Basic: a public client cannot exchange), and the request carries an OAuth 1.0a
// signature with its protocol parameters in the form body (RFC 5849 §3.5.2), over the token
// endpoint's URL and every body parameter, made with the application's consumer secret and
// the token's secret: it is checked by the gateway's own OAuth 1.0a verifier, its nonce
// claimed in the same replay cache, so the token's secret never travels.
//
// The answer is what the other grants answer for the API: a JWT access token for
// {base_url}/api and a refresh token, of a new grant of the user to this client, with the
// token's scopes (or fewer, when `scope` asks). Exchanging the same token again revokes the
// grant the earlier exchange made. Each exchange is recorded (oauth2_exchanges, and per token in oauth1_exchanges) and every
// attempt audited (`oauth2.exchange`). The OAuth 1.0a token keeps working.
import type { IncomingMessage } from 'node:http'
import { stringify } from 'node:querystring'
import type Provider from 'oidc-provider'
import type { ClientView, KoaContextWithOIDC } from 'oidc-provider'
import { requestedHost, type ProviderLibrary } from '../host/authorization.js'
import type { AuditStore } from '../audit/store.js'
import type { AuthRequest, CredentialLookup } from '../domain/auth.js'
import type { ReplayCache } from '../replay/types.js'
import { verifyOAuth, type OAuthVerifyOptions } from '../auth/oauth/verify.js'
import { apiResource, isApiScope } from './scopes.js'
import type { OAuth2Applications } from './applications.js'

export const tokenExchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange'
export const oauth1TokenType = 'urn:kigo:params:oauth:token-type:oauth1-access-token'
const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token'

/** The audit trail's action for every exchange, granted or refused. */
export const exchangeAuditAction = 'oauth2.exchange'

export interface TokenExchangeDeps {
  lookup: CredentialLookup
  replay: ReplayCache
  oauth: OAuthVerifyOptions
  applications: Pick<OAuth2Applications, 'consumerOf' | 'exchangedGrants' | 'recordExchange'>
  /** Revokes a grant with its tokens, on every gateway. */
  revokeGrant(grantId: string): Promise<void>
  audit?: Pick<AuditStore, 'record'>
  now: () => number
  log?: (message: string, err?: Error) => void
}

/** The library's classes the handler uses (lib/models), as far as kigo needs them. */
interface TokenModels {
  Grant: new (init: { accountId: string; clientId: string }) => { addResourceScope(resource: string, scope: string): void; save(): Promise<string> }
  AccessToken: new (init: Record<string, unknown>) => { resourceServer?: unknown; scope?: string; expiration: number; save(): Promise<string> }
  RefreshToken: new (init: Record<string, unknown>) => { save(): Promise<string> }
  ResourceServer: new (identifier: string, info: Record<string, unknown>) => unknown
  registerGrantType(name: string, handler: (ctx: KoaContextWithOIDC) => Promise<void>, params?: string[]): void
}

type ErrorClass = new (description?: string) => Error

/** The OAuth 1.0a parameters the token endpoint must let through to the handler. */
const oauth1Parameters = ['oauth_consumer_key', 'oauth_token', 'oauth_signature_method', 'oauth_signature', 'oauth_timestamp', 'oauth_nonce', 'oauth_version']
const exchangeParameters = ['subject_token', 'subject_token_type', 'scope', 'resource', 'requested_token_type', ...oauth1Parameters]

/** Marks a request whose exchange the handler audited already. */
const audited = Symbol('exchange audited')

/** The client_id of a Basic Authorization header (RFC 6749 §2.3.1: form-encoded), or null. */
function basicClientId(header: string | undefined): string | null {
  const m = /^basic +([A-Za-z0-9+/=]+)$/i.exec(header ?? '')
  if (!m) return null
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) return null
  try {
    return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')).slice(0, 128)
  } catch {
    return null
  }
}

/** Adds the exchange to `provider`'s token endpoint. `resourceServerInfo` is the API's, as the provider's configuration gives it. */
export function registerTokenExchange(
  provider: Provider,
  library: ProviderLibrary,
  deps: TokenExchangeDeps,
  resourceServerInfo: (client: ClientView) => Record<string, unknown>,
  registeredScopes: (client: ClientView) => string[],
): void {
  const models = provider as unknown as TokenModels
  const e = library.errors as unknown as Record<'InvalidGrant' | 'InvalidRequest' | 'UnauthorizedClient' | 'InvalidScope' | 'InvalidTarget', ErrorClass>
  const resource = apiResource(provider.issuer)

  /** One exchange in the audit trail, by the token's user when known (else by no one: `user:`). */
  const record = async (address: string, clientId: string, after: Record<string, unknown>, userId?: string) => {
    if (!deps.audit) return
    try {
      await deps.audit.record({ actor: { kind: 'user', user: userId ?? '', address }, kind: 'oidc', action: exchangeAuditAction, target: clientId, before: null, after: { client_id: clientId, ...after } })
    } catch (err) {
      deps.log?.('audit record failed', err as Error)
    }
  }

  // Refusals before the handler (the client's authentication, the library's own checks) are audited too.
  provider.on('grant.error', (ctx: KoaContextWithOIDC, err: Error & { error?: string; error_description?: string }) => {
    if (ctx.oidc.params?.grant_type !== tokenExchangeGrant || ctx.state[audited] === true) return
    const koa = ctx as unknown as { ip: string }
    void record(koa.ip, ctx.oidc.client?.clientId ?? basicClientId(ctx.req.headers.authorization) ?? '', { ok: false, error: err.error ?? 'server_error', reason: err.error_description ?? null })
  })

  const handler = async (ctx: KoaContextWithOIDC): Promise<void> => {
    const client = ctx.oidc.client!
    const params = ctx.oidc.params ?? {}
    const koa = ctx as unknown as { ip: string; protocol: string; originalUrl: string; oidc: { body?: Record<string, unknown> } }
    const subject = typeof params.subject_token === 'string' ? params.subject_token : ''
    let userId: string | undefined
    let consumerKey: string | null = null
    const audit = async (after: Record<string, unknown>) => {
      ctx.state[audited] = true
      await record(koa.ip, client.clientId, { consumer_key: consumerKey, user: userId ?? null, ...after }, userId)
    }
    const refuse = async (error: ErrorClass, code: string, description: string): Promise<never> => {
      await audit({ ok: false, error: code, reason: description })
      // The library's own description of some errors is fixed ("grant request is invalid"): the client is told what was wrong.
      throw Object.assign(new error(description), { error_description: description })
    }

    if ((client as ClientView & { tokenEndpointAuthMethod?: string }).tokenEndpointAuthMethod === 'none') {
      return refuse(e.UnauthorizedClient, 'unauthorized_client', 'a public client cannot exchange tokens: it has no secret to authenticate with')
    }
    consumerKey = await deps.applications.consumerOf(client.clientId)
    if (consumerKey === null) return refuse(e.UnauthorizedClient, 'unauthorized_client', 'this client is not the OAuth 2.0 client of an OAuth 1.0a application')
    const absent = ['subject_token', 'subject_token_type'].filter((name) => typeof params[name] !== 'string' || params[name] === '')
    if (absent.length > 0) return refuse(e.InvalidRequest, 'invalid_request', `missing required parameter${absent.length > 1 ? 's' : ''} ${absent.join(', ')}`)
    if (params.subject_token_type !== oauth1TokenType) return refuse(e.InvalidRequest, 'invalid_request', `subject_token_type must be ${oauth1TokenType}`)
    if (params.requested_token_type !== undefined && params.requested_token_type !== accessTokenType) return refuse(e.InvalidRequest, 'invalid_request', `requested_token_type may only be ${accessTokenType}`)
    if (params.resource !== undefined && params.resource !== resource) return refuse(e.InvalidTarget, 'invalid_target', `the only resource is this deployment's API, ${resource}`)

    const token = await deps.lookup.accessToken(subject)
    if (token !== null && token.consumerKey !== consumerKey) {
      return refuse(e.UnauthorizedClient, 'unauthorized_client', 'subject_token belongs to another application')
    }
    const body = koa.oidc.body ?? {}
    const missing = oauth1Parameters.filter((name) => name !== 'oauth_version' && (typeof body[name] !== 'string' || body[name] === ''))
    if (missing.length > 0) return refuse(e.InvalidRequest, 'invalid_request', `the OAuth 1.0a signature is missing from the form body: ${missing.join(', ')}`)
    if (body.oauth_token !== subject) return refuse(e.InvalidRequest, 'invalid_request', 'oauth_token must be the subject_token')
    if (body.oauth_consumer_key !== consumerKey) return refuse(e.UnauthorizedClient, 'unauthorized_client', "oauth_consumer_key must be this client's application's")

    // The request as the OAuth 1.0a verifier reads any other: its URL, and its form body (re-encoded from the parsed one; the signature is over decoded names and values).
    const req: AuthRequest = {
      method: 'POST',
      url: koa.originalUrl,
      // The host the client sent (an alias too), as the API reads it: the provider sees the main host.
      host: (ctx.req as IncomingMessage & { [requestedHost]?: string })[requestedHost] ?? ctx.host.toLowerCase(),
      scheme: koa.protocol === 'https' ? 'https' : 'http',
      headers: ctx.req.headers,
      contentType: 'application/x-www-form-urlencoded',
      body: Buffer.from(stringify(body as Record<string, string | string[]>)),
      now: deps.now(),
    }
    const verified = await verifyOAuth(req, deps.lookup, deps.replay, { ...deps.oauth, advice: { hosts: [], exposeBaseString: false } })
    if (verified.kind !== 'ok') {
      userId = verified.attemptedUser
      // A problem of the request's form is the request's; anything else (unknown, revoked or
      // other token, bad signature, used nonce, stale timestamp) is the grant's.
      if (verified.outcome === 'malformed') return refuse(e.InvalidRequest, 'invalid_request', verified.message)
      return refuse(e.InvalidGrant, 'invalid_grant', `${verified.code}: ${verified.message}`)
    }
    const principal = verified.principal
    userId = principal.userId

    // The token's scopes, never wider than the client's (the application's); fewer when asked.
    const granted = principal.scopes.filter((s) => registeredScopes(client).includes(s))
    let scopes = granted
    if (typeof params.scope === 'string' && params.scope !== '') {
      const asked = [...new Set(params.scope.split(' ').filter((s) => s !== ''))]
      const wider = asked.filter((s) => !isApiScope(s) || !granted.includes(s))
      if (wider.length > 0) return refuse(e.InvalidScope, 'invalid_scope', `the OAuth 1.0a token does not grant ${wider.join(' ')}`)
      scopes = granted.filter((s) => asked.includes(s))
    }
    if (scopes.length === 0) return refuse(e.InvalidScope, 'invalid_scope', 'the OAuth 1.0a token grants none of the API scopes this client is registered for')
    const scope = scopes.join(' ')

    const grant = new models.Grant({ accountId: principal.userId, clientId: client.clientId })
    grant.addResourceScope(resource, scope)
    const grantId = await grant.save()
    const recorded = await deps.applications.recordExchange({ consumerKey, token: subject, userId: principal.userId, clientId: client.clientId, grantId, at: deps.now() })
    // An earlier exchange of this token made a grant: it is revoked (its tokens refused on every gateway).
    const earlier = await deps.applications.exchangedGrants(subject, recorded)
    for (const id of earlier) await deps.revokeGrant(id)
    const at = new models.AccessToken({ accountId: principal.userId, client, grantId, gty: 'token_exchange', scope })
    at.resourceServer = new models.ResourceServer(resource, resourceServerInfo(client))
    at.scope = scope
    const accessToken = await at.save()
    const rt = new models.RefreshToken({ accountId: principal.userId, client, grantId, gty: 'token_exchange', resource, rotations: 0, scope })
    const refreshToken = await rt.save()
    await audit({ ok: true, grant: grantId, scopes, revoked_grants: earlier })

    ctx.body = {
      access_token: accessToken,
      issued_token_type: accessTokenType,
      token_type: 'Bearer',
      expires_in: at.expiration,
      refresh_token: refreshToken,
      scope,
    }
  }
  models.registerGrantType(tokenExchangeGrant, handler, exchangeParameters)
}
