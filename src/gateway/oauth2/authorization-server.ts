// The OpenID Connect provider as the API's OAuth 2.0 authorization server (docs/oauth2.md):
// what its configuration (oidc/provider.ts, through host/authorization.ts) adds for the API, and what the library lacks.
//
// - One resource, the API (`{base_url}/api`, RFC 8707): a client asking any API scope
//   without naming a resource is given it; any other resource is refused (invalid_target).
//   Its access tokens are JWTs (RFC 9068) signed with the provider's keys, one hour, with
//   the scopes the user granted among those the client is registered for, and their grant
//   (`kigo_grant`) so that revoking the grant revokes them.
// - Refresh tokens rotate at every use; the library revokes the whole grant when a spent
//   one is used again (its refresh_token grant), which reaches the gateways through the
//   store's revocation hook (revocations.ts).
// - The device authorization grant (RFC 8628), its pages at {base_url}/device.
// - Revocation (RFC 7009) and introspection (RFC 7662) of the API's JWTs, which the library
//   refuses (it cannot find a token it never stored): revoking one revokes its grant, as
//   the library does for its own access tokens; introspection answers the client the
//   token was issued to, and `active: false` to anyone else.
// - RFC 8414 metadata at /.well-known/oauth-authorization-server (the discovery document),
//   whose scopes_supported names the API's scopes too.
import type Provider from 'oidc-provider'
import type { ClientView, KoaContextWithOIDC } from 'oidc-provider'
import type { ProviderLibrary } from '../host/authorization.js'
import { apiAccessTokenSeconds, apiResource, apiScopes, grantClaim, isApiScope } from './scopes.js'
import { codeConfirmPage, codeInputPage, deviceDonePage } from './device-pages.js'
import type { AccessTokenVerifier } from './access-token.js'
import { registerTokenExchange, tokenExchangeGrant, type TokenExchangeDeps } from './exchange.js'

/** Where a client's metadata, as the provider's adapter gives it, carries its API scopes (space-separated). */
export const apiScopesProperty = 'kigo_api_scopes'

/** The device flow's page for people, at the deployment's root. */
export const deviceRoute = '/device'

/** How long a device code waits for its user, seconds (RFC 8628 §3.2 expires_in). */
export const deviceCodeSeconds = 10 * 60

export const metadataPath = '/.well-known/oauth-authorization-server'
const discoveryPath = '/.well-known/openid-configuration'

interface TokenLike {
  grantId?: string
  resourceServer?: { audience?: string }
}

interface Context {
  path: string
  status: number
  body: unknown
  type: string
  oidc?: { route?: string; client?: ClientView; params?: Record<string, unknown> }
}

/** The API scopes `client` is registered for. */
export const registeredScopes = (client: ClientView | undefined): string[] => {
  const value = (client as (ClientView & Record<string, unknown>) | undefined)?.[apiScopesProperty]
  return typeof value === 'string' ? value.split(' ').filter(isApiScope) : []
}

/** The API as a resource server for a client registered for `scope`: JWT access tokens of an hour. */
export const apiResourceServerInfo = (resource: string, scope: readonly string[]) => ({ scope: scope.join(' '), audience: resource, accessTokenTTL: apiAccessTokenSeconds, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } })

const asksApiScope = (scope: unknown) => typeof scope === 'string' && scope.split(' ').some(isApiScope)

/** What the provider's configuration adds for the API (spread into it by oidc/provider.ts). */
export function apiAuthorizationConfiguration(library: ProviderLibrary, issuer: string, sendPage: (ctx: KoaContextWithOIDC, document: string) => void) {
  const resource = apiResource(issuer)
  const InvalidTarget = library.errors.InvalidTarget as unknown as new (description?: string) => Error
  return {
    features: {
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx: KoaContextWithOIDC, _client: ClientView, oneOf?: string[]) => oneOf ?? (asksApiScope(ctx.oidc.params?.scope) ? resource : undefined),
        // The token endpoint issues for the resource the user granted, without the client naming it again.
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, indicator: string, client: ClientView) => {
          if (indicator !== resource) throw new InvalidTarget('the only resource is this deployment\'s API, ' + resource)
          const scope = registeredScopes(client)
          if (scope.length === 0) throw new InvalidTarget('this client is not registered for the API')
          return apiResourceServerInfo(resource, scope)
        },
      },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: async (ctx: KoaContextWithOIDC, form: string, _out: unknown, err?: unknown) => sendPage(ctx, codeInputPage(form, err)),
        userCodeConfirmSource: async (ctx: KoaContextWithOIDC, form: string, _client: unknown, _info: unknown, userCode: string) => sendPage(ctx, codeConfirmPage(ctx, form, userCode)),
        successSource: async (ctx: KoaContextWithOIDC) => sendPage(ctx, deviceDonePage(ctx)),
      },
      revocation: {
        enabled: true,
        // A client revokes its own tokens only (RFC 7009 §2.1); another's are left alone, answered 200.
        allowedPolicy: async (_ctx: KoaContextWithOIDC, client: ClientView, token: { clientId?: string }) => token.clientId === client.clientId,
      },
      introspection: {
        enabled: true,
        // Only the client the token was issued to learns anything about it.
        allowedPolicy: async (ctx: KoaContextWithOIDC, client: ClientView, token: { clientId?: string }) => token.clientId === client.clientId,
      },
    },
    rotateRefreshToken: true,
    extraTokenClaims: async (_ctx: KoaContextWithOIDC, token: TokenLike) => (token.resourceServer?.audience === resource && token.grantId ? { [grantClaim]: token.grantId } : undefined),
    /** Whether a code (or device code) grants the API: its refresh token needs no offline_access. */
    grantsApi: (code: { resource?: string | string[] }) => [code.resource ?? []].flat().includes(resource),
  }
}

export interface ApiAuthorizationDeps {
  verifier: Pick<AccessTokenVerifier, 'verify'>
  /** Revokes a grant with its codes and tokens, on every gateway. */
  revokeGrant(grantId: string): Promise<void>
  /** The token exchange of OAuth 1.0a access tokens (exchange.ts); absent, the grant is not offered. */
  exchange?: TokenExchangeDeps
}

/** The grant types every client may use; the token exchange when it is offered (a public client is refused at the exchange). */
export const clientGrantTypes = (deps: ApiAuthorizationDeps | undefined): string[] => [
  'authorization_code',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:device_code',
  ...(deps?.exchange ? [tokenExchangeGrant] : []),
]

/** The provider's middleware for the API (see the header): metadata, the JWTs at revocation and introspection, and the token exchange. */
export function installApiAuthorization(provider: Provider, library: ProviderLibrary, deps: ApiAuthorizationDeps): void {
  const issuer = provider.issuer
  if (deps.exchange) {
    const resource = apiResource(issuer)
    registerTokenExchange(provider, library, deps.exchange, (client) => apiResourceServerInfo(resource, registeredScopes(client)), registeredScopes)
  }
  provider.use(async (koa, next) => {
    const ctx = koa as unknown as Context
    const metadata = ctx.path === metadataPath
    if (metadata) ctx.path = discoveryPath
    await next()
    if ((metadata || ctx.path === discoveryPath) && ctx.status === 200 && typeof ctx.body === 'object' && ctx.body !== null) {
      const doc = ctx.body as { scopes_supported?: string[] }
      doc.scopes_supported = [...new Set([...(doc.scopes_supported ?? []), ...apiScopes])]
      return
    }
    const route = ctx.oidc?.route
    if ((route !== 'revocation' && route !== 'introspection') || (ctx.body as { error?: string } | null)?.error !== 'unsupported_token_type') return
    // The library authenticated the client before it refused the structured token.
    const client = ctx.oidc?.client
    const value = ctx.oidc?.params?.token
    if (!client || typeof value !== 'string') return
    const verified = await deps.verifier.verify(value, issuer)
    const own = verified.ok && verified.token.clientId === client.clientId
    ctx.status = 200
    if (route === 'revocation') {
      if (own) await deps.revokeGrant(verified.token.grantId)
      ctx.body = ''
      return
    }
    ctx.type = 'application/json; charset=utf-8'
    ctx.body = own
      ? {
          active: true,
          token_type: 'Bearer',
          scope: verified.token.scopes.join(' '),
          client_id: verified.token.clientId,
          sub: verified.token.userId,
          iss: issuer,
          aud: apiResource(issuer),
          exp: verified.token.expiresAt,
          iat: verified.token.issuedAt,
          jti: verified.token.jti,
        }
      : { active: false }
  })
}
