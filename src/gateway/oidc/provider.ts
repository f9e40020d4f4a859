// The OpenID Connect provider (docs/oidc.md): the `oidc-provider` library, configured for
// the authorization code flow with PKCE (S256) only, the `openid`, `profile` and
// `offline_access` scopes, userinfo, revocation and RP-initiated logout. Its state lives in
// the gateway's SQL store (adapter below), its signing keys too (store.ts), and sign-in and
// consent are the account area's own pages (interactions.ts).
import type { IncomingMessage, ServerResponse } from 'node:http'
import type Provider from 'oidc-provider'
import type { Adapter, AdapterPayload, ClientView, Configuration, KoaContextWithOIDC } from 'oidc-provider'
import { createHash } from 'node:crypto'
import type { OidcLibrary } from './library.js'
import { deriveKey, safeEqual } from '../../common/secrets.js'
import { livePrevious } from '../domain/secret-rotation.js'
import { sessionCookie } from '../account-area/session.js'
import { html, trusted } from '../../common/html.js'
import { securePageResponse } from '../../common/security-headers.js'
import { page } from '../account-area/html.js'
import type { OidcStore, SigningKey } from './store.js'
import type { User } from '../store/types.js'
import type { ApiAuthorization } from '../host/authorization.js'

/** Lifetimes, seconds (docs/oidc.md#lifetimes). */
export const oidcTtl = {
  AccessToken: 60 * 60,
  AuthorizationCode: 60,
  IdToken: 60 * 60,
  RefreshToken: 30 * 24 * 60 * 60,
  Interaction: 60 * 60,
  Session: 12 * 60 * 60,
  Grant: 365 * 24 * 60 * 60,
} as const

/** How long a retired signing key stays published: longer than anything it signed lives. */
export const retiredKeySeconds = Math.max(oidcTtl.IdToken, oidcTtl.AccessToken) + 24 * 60 * 60

/** Where the provider's own endpoints are; discovery stays at the well-known path. */
export const oidcPrefix = '/oidc'

export const routes = {
  authorization: `${oidcPrefix}/auth`,
  token: `${oidcPrefix}/token`,
  userinfo: `${oidcPrefix}/userinfo`,
  jwks: `${oidcPrefix}/jwks`,
  end_session: `${oidcPrefix}/session/end`,
  revocation: `${oidcPrefix}/token/revocation`,
  introspection: `${oidcPrefix}/token/introspection`,
  device_authorization: `${oidcPrefix}/device/auth`,
  pushed_authorization_request: `${oidcPrefix}/request`,
  backchannel_authentication: `${oidcPrefix}/backchannel`,
  registration: `${oidcPrefix}/reg`,
  challenge: `${oidcPrefix}/challenge`,
} as const

export interface OidcProviderDeps {
  store: OidcStore
  /** The account area's user lookup and session lookup (one login, one session). */
  users: { getUser(id: string): Promise<User | null>; getWebSession(id: string, now: Date): Promise<{ user: User | null } | null> }
  secretKey: string
  now: () => number
  /** OAuth 2.0 for the API (docs/oauth2.md): the resource, the device flow, its JWTs at revocation and introspection. */
  api: ApiAuthorization
}

/** Where a stored payload records the issuer (deployment) that stored it. */
const issuerMark = 'kigo_issuer'

/**
 * The payload as the library stored it, when `issuer` stored it (docs/oidc.md#storage):
 * both deployments share one table, so a code, token, grant, session or interaction of
 * one deployment is not found at the other. State stored before the mark existed has
 * none and is read by either until it expires.
 */
function ownPayload(found: AdapterPayload | undefined, issuer: string): AdapterPayload | undefined {
  if (found === undefined) return undefined
  const { [issuerMark]: storedBy, ...payload } = found
  return storedBy === undefined || storedBy === issuer ? payload : undefined
}

/**
 * Where a client's metadata, as the adapter gives it to the library, carries the secret a
 * rotation replaced while it still works (docs/oidc.md#rotating-the-client-secret). The
 * adapter reads it at every lookup, so it is absent once expired (the library keys its
 * clients by their metadata).
 */
const previousSecretProperty = 'kigo_previous_client_secret'

/** The library's storage interface over the gateway's store, for one issuer; relying parties come from oidc_clients. */
function adapterFor(store: OidcStore, issuer: string, now: () => number, apiScopesProperty: string, grantTypes: readonly string[]) {
  return class SqlAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await store.upsertState(this.model, id, { ...payload, [issuerMark]: issuer }, expiresIn)
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') {
        const found = await store.getClient(id)
        if (!found) return undefined
        const c = found.client
        const previous = livePrevious(found.previous, now())
        return {
          client_id: c.clientId,
          client_name: c.name,
          ...(found.secret === null ? { token_endpoint_auth_method: 'none' } : { client_secret: found.secret, token_endpoint_auth_method: 'client_secret_basic' }),
          ...(found.secret !== null && previous !== null ? { [previousSecretProperty]: previous.secret } : {}),
          redirect_uris: c.redirectUris,
          post_logout_redirect_uris: c.postLogoutRedirectUris,
          grant_types: [...grantTypes],
          [apiScopesProperty]: c.apiScopes.join(' '),
          response_types: ['code'],
        }
      }
      return ownPayload(await store.findState(this.model, id), issuer)
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return ownPayload(await store.findStateByUserCode(this.model, userCode), issuer)
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return ownPayload(await store.findStateByUid(this.model, uid), issuer)
    }

    async consume(id: string): Promise<void> {
      await store.consumeState(this.model, id)
    }

    async destroy(id: string): Promise<void> {
      await store.destroyState(this.model, id)
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.revokeGrant(grantId)
    }
  }
}

function sendKoaPage(ctx: KoaContextWithOIDC, document: string, formActionOrigins: string[] = []): void {
  // Koa's context holds Node's request and response (oidc-provider's types leave them out).
  const { req, res } = ctx as unknown as { req: IncomingMessage; res: ServerResponse }
  securePageResponse(req, res, { formAction: formActionOrigins })
  ctx.type = 'text/html; charset=utf-8'
  ctx.body = document
}

const originOf = (uri: string): string | null => {
  try {
    return new URL(uri).origin
  } catch {
    return null
  }
}

/** One provider for one issuer (a deployment's public base URL). */
export function buildProvider(library: OidcLibrary, issuer: string, keys: SigningKey[], deps: OidcProviderDeps): Provider {
  const { interactionPolicy } = library
  const { store, users } = deps
  const api = deps.api.configuration(library, issuer, sendKoaPage)
  const { apiScopesProperty } = deps.api

  // The account area's session decides who is signed in: a provider session for someone
  // else (or for a user who has signed out of kigo) asks for the login step again, which
  // the interaction answers from the account session or by sending the user to sign in.
  const basePolicy = interactionPolicy.base()
  const login = basePolicy.get('login')!
  login.checks.add(
    new interactionPolicy.Check('kigo_session', 'The account session does not match', async (ctx) => {
      const id = ctx.cookies.get(sessionCookie, { signed: false })
      const session = id ? await users.getWebSession(id, new Date(deps.now())) : null
      const accountId = ctx.oidc.session?.accountId
      return session?.user && session.user.id === accountId ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT
    }),
  )

  const configuration: Configuration = {
    adapter: adapterFor(store, issuer, deps.now, apiScopesProperty, deps.api.grantTypes),
    // The replaced secret rides in the client's metadata, never published: there is no
    // registration endpoint, and the library only compares it (compareClientSecret below).
    extraClientMetadata: { properties: [previousSecretProperty, apiScopesProperty] },
    findAccount: async (_ctx, sub) => {
      const user = await users.getUser(sub)
      if (!user) return undefined
      return {
        accountId: user.id,
        claims: async () => ({
          sub: user.id,
          preferred_username: user.id,
          name: user.name,
          picture: `${issuer}/users/${encodeURIComponent(user.id)}/profile.png`,
          profile: `${issuer}/${encodeURIComponent(user.id)}/`,
        }),
      }
    },
    claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'picture', 'profile'] },
    scopes: ['openid', 'profile', 'offline_access'],
    responseTypes: ['code'],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    clientDefaults: { grant_types: ['authorization_code'], response_types: ['code'], id_token_signed_response_alg: 'RS256', token_endpoint_auth_method: 'client_secret_basic' },
    // What docs/oidc.md offers and nothing more: HTTP Basic, or no secret for a public
    // client (the library would otherwise take the secret in the body from a Basic client,
    // and advertise JWT client assertions, pushed requests and DPoP).
    clientAuthMethods: ['client_secret_basic', 'none'],
    features: {
      devInteractions: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          const client = ctx.oidc.client
          sendKoaPage(
            ctx,
            page({
              title: 'Sign out',
              narrow: true,
              body: html`<div class="card">
<h1>Sign out of kigo?</h1>
<p>${client ? html`${client.clientName ?? client.clientId} asks to sign you out.` : 'A site asks to sign you out.'} Signing out ends your kigo session in this browser.</p>
${trusted(form)}
<div class="actions">
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>
</div>
</div>`,
            }),
            (client?.postLogoutRedirectUris ?? []).map(originOf).filter((o: string | null): o is string => o !== null),
          )
        },
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
          sendKoaPage(ctx, page({ title: 'Signed out', narrow: true, body: html`<div class="card"><h1>You are signed out</h1><p>You can close this page, or <a href="/account/login">sign in again</a>.</p></div>` }))
        },
      },
      // OAuth 2.0 for the API (docs/oauth2.md): resource, device flow, introspection, revocation's policy.
      ...api.features,
    },
    jwks: { keys: keys.map((k) => k.jwk) },
    cookies: {
      keys: [deriveKey(deps.secretKey, 'oidc cookies').toString('base64url')],
      long: { sameSite: 'lax' },
      short: { sameSite: 'lax' },
    },
    interactions: {
      policy: basePolicy,
      url: (_ctx, interaction) => `${oidcPrefix}/interaction/${interaction.uid}`,
    },
    // The device flow's page for people (docs/oauth2.md#grants), short to type.
    routes: { ...routes, code_verification: deps.api.deviceRoute },
    ttl: { ...oidcTtl, DeviceCode: deps.api.deviceCodeSeconds },
    rotateRefreshToken: api.rotateRefreshToken,
    extraTokenClaims: api.extraTokenClaims,
    renderError: async (ctx, out) => {
      ctx.status = ctx.status >= 400 ? ctx.status : 400
      sendKoaPage(
        ctx,
        page({
          title: 'Sign-in request refused',
          narrow: true,
          body: html`<div class="card">
<h1>This sign-in request cannot be completed</h1>
<p class="error" role="alert">${out.error_description ?? out.error}</p>
<p class="muted">Error: <code>${out.error}</code>. The site that sent you here must fix its request; nothing was changed on your account.</p>
</div>`,
        }),
      )
    },
    // Refresh tokens only when the site asks for offline_access (and the user consents), or
    // for the API, whose clients keep their access (docs/oauth2.md#grants).
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && (code.scopes.has('offline_access') || api.grantsApi(code)),
  }
  const provider = new library.Provider(issuer, configuration)
  // client_secret_basic is checked by the library's one comparison of a presented secret
  // with the client's; it also accepts the secret a rotation replaced while the overlap
  // lasts (the adapter hands it over only then). Both are compared, in constant time.
  const clientPrototype = provider.Client.prototype
  // The library's own method, called with the client as `this` below.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const compareCurrent = clientPrototype.compareClientSecret
  clientPrototype.compareClientSecret = async function (this: ClientView & Record<string, unknown>, actual: string): Promise<boolean> {
    const current = await compareCurrent.call(this, actual)
    const previous = this[previousSecretProperty]
    if (typeof previous !== 'string') return current
    const old = safeEqual(actual, previous)
    return current || old
  }
  // The library's own pages (RP-initiated logout's auto-submitting form) get the account
  // pages' headers too: never framed, nothing loaded, forms posted to this origin only;
  // their inline script is allowed by its hash alone.
  provider.use(async (ctx, next) => {
    await next()
    if (typeof ctx.body !== 'string' || ctx.type !== 'text/html' || ctx.response.get('content-security-policy')) return
    const scripts = [...ctx.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`)
    securePageResponse(ctx.req, ctx.res, scripts.length > 0 ? { scriptHashes: scripts } : {})
  })
  // The public origin is decided by the gateway's own rules (trusted proxies) and handed
  // to the library as X-Forwarded-* of the request it is given (mount.ts).
  provider.proxy = true
  deps.api.install(provider, library)
  return provider
}
