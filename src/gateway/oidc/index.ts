// The OpenID Connect provider on the gateway's public port (docs/oidc.md): discovery at
// /.well-known/openid-configuration and the library's endpoints under /oidc, handed the
// raw request; the sign-in and consent steps (interactions) on the account area's pages
// and session; the account page's list of sites signed in to.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type Provider from 'oidc-provider'
import type { KoaContextWithOIDC } from 'oidc-provider'
import type { Config } from '../../common/config.js'
import { errors, isConnectionFailure, Unavailable } from '../../common/errors.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import { sendError } from '../../common/api-errors.js'
import { sendErrorPage } from '../account-area/error-page.js'
import type { SafeHtml } from '../../common/html.js'
import { field, type AccountArea, type AreaStore, messagePage, sendPage, seeOther, type User } from '../account-area/index.js'
import type { Outcome } from '../domain/auth.js'
import { maxClientLength } from '../usage/client-name.js'
import type { UsageRecorder } from '../usage/recorder.js'
import { confinedHandler, loadOidcLibrary } from './library.js'
import { buildProvider, oidcPrefix, retiredKeySeconds, type OidcProviderDeps } from './provider.js'
import type { OidcStore, SigningKey } from './store.js'
import { requestedHost, type ApiAuthorization } from '../host/authorization.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { oidcConsentPage, signedInSitesSection } from './pages.js'
import { sessionBinding, sessionCookie, type SessionBinding } from '../account-area/session.js'
import { baseUrl, hostsOf, type Deployment } from '../../common/deployment.js'

export { OidcStore } from './store.js'

export interface OidcOptions {
  config: Pick<Config, 'domesticHost' | 'globalHost' | 'publicScheme' | 'secretKey' | 'domesticHostAliases' | 'globalHostAliases'>
  store: OidcStore
  /** The identity store: users, and the account area's sessions (one login, one session). */
  users: OidcProviderDeps['users'] & { deleteWebSession(id: string): Promise<void> } & AreaStore
  /** The host's account area (one login, one session), mounted in this plugin's scope. */
  account: { mount(app: FastifyInstance): Promise<AccountArea> }
  metrics?: Pick<GatewayMetrics, 'authRequests'>
  now?: () => number
  /** The usage report: each code or refresh token exchanged, by user and site name (method "oidc"). */
  usage?: Pick<UsageRecorder, 'observe'>
  /** The audit trail: a user revoking a site's access on the account page is recorded (`account.oidc_revoke`). */
  audit?: Pick<AuditStore, 'record'>
  /** The deployments' providers, loaded (the operator API rotates keys through them too). */
  providers: OidcProviders
  /** OAuth 2.0 for the API on the provider (docs/oauth2.md): its configuration, metadata and device pages. */
  api: ApiAuthorization
  /** How often each gateway looks for a rotated signing key, ms (default 30 s). */
  keyPollMs?: number
  /** How often expired provider state is swept, ms (default 10 minutes). */
  sweepMs?: number
}

/**
 * The providers of the two deployments (one issuer each: the deployment's main URL, on
 * every alias), rebuilt when the signing keys change: by a rotation on this gateway at
 * once, on the others at their next poll.
 */
export class OidcProviders {
  private byDeployment = new Map<Deployment, { provider: Provider; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> }>()
  private version = ''
  private keys: readonly SigningKey[] = []
  private loading: Promise<void> | null = null
  private readonly binding: SessionBinding

  constructor(private readonly options: Pick<OidcOptions, 'config' | 'store' | 'users' | 'now' | 'usage' | 'api'> & { log?: (message: string) => void }) {
    this.binding = sessionBinding(options.config.secretKey)
  }

  async load(): Promise<void> {
    const { store } = this.options
    const library = await loadOidcLibrary(this.options.log)
    const keys = await store.keys(retiredKeySeconds)
    const version = await store.keysVersion()
    const { users, config } = this.options
    const next = new Map<Deployment, { provider: Provider; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> }>()
    for (const deployment of ['domestic', 'global'] as const) {
      // The account session is read as the account area reads it: bound to this deployment.
      const sessionId = (cookie: string) => this.binding.open(cookie, deployment)
      const deps: OidcProviderDeps = {
        store,
        users: { getUser: (id) => users.getUser(id), getWebSession: async (cookie, now) => { const id = sessionId(cookie); return id === null ? null : users.getWebSession(id, now) } },
        secretKey: config.secretKey,
        now: this.options.now ?? Date.now,
        api: this.options.api,
      }
      const provider = buildProvider(library, baseUrl(hostsOf(config), deployment), keys, deps)
      // One session: signing out through the provider (RP-initiated logout) ends the
      // account session too, when it is the same user's. A browser whose provider
      // session is alice's while bob is signed in to kigo (she signed out of the account
      // area, he signed in) keeps bob signed in; so does "Stay signed in", and a browser
      // with no provider session (the library then asks nobody). Done before the answer.
      provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
        if (ctx.oidc.params?.logout !== undefined && ctx.oidc.session?.accountId) ctx.state[signedOutAccount] = ctx.oidc.session.accountId
      })
      provider.use(async (ctx, next) => {
        await next()
        const accountId = ctx.state[signedOutAccount]
        const cookie = ctx.cookies.get(sessionCookie, { signed: false })
        const id = cookie ? sessionId(cookie) : null
        if (typeof accountId !== 'string' || !id) return
        const session = await users.getWebSession(id, new Date((this.options.now ?? Date.now)())).catch(() => null)
        if (session?.user?.id === accountId) await users.deleteWebSession(id).catch(() => undefined)
      })
      // The usage report counts each successful exchange for its user under the client's
      // name and its client_id: a login-API site of the same name (family) shows as moved
      // when this client is its owner's own (usage/moved.ts).
      provider.on('grant.success', (ctx: { oidc: { client?: { clientId: string; clientName?: string }; entities?: Record<string, { accountId?: string } | undefined> } }) => {
        const entities = ctx.oidc.entities ?? {}
        const user = entities.AuthorizationCode?.accountId ?? entities.RefreshToken?.accountId ?? entities.DeviceCode?.accountId
        const client = ctx.oidc.client
        if (!this.options.usage || !user || !client) return
        this.options.usage.observe({ ok: true, method: 'oidc', outcome: 'ok', identity: { user }, clientId: client.clientId }, () => (client.clientName ?? client.clientId).slice(0, maxClientLength), (this.options.now ?? Date.now)())
      })
      next.set(deployment, { provider, handle: confinedHandler(provider.callback()) })
    }
    this.byDeployment = next
    this.version = version
    this.keys = keys
  }

  /** The keys the providers sign with and publish (OAuth 2.0 access tokens are verified with them). */
  signingKeys(): readonly SigningKey[] {
    return this.keys
  }

  /** Rebuilds the providers when the keys changed since the last load. */
  async refresh(): Promise<void> {
    if (this.loading) return this.loading
    this.loading = (async () => {
      try {
        if ((await this.options.store.keysVersion()) !== this.version) await this.load()
      } finally {
        this.loading = null
      }
    })()
    return this.loading
  }

  async rotateKey(): Promise<{ kid: string; retired: string[]; dropped: number }> {
    const rotated = await this.options.store.rotateKey(retiredKeySeconds)
    await this.load()
    return rotated
  }

  for(deployment: Deployment) {
    return this.byDeployment.get(deployment)
  }
}

/** Where the end_session.success event leaves the account the provider session signed out (ctx.state). */
const signedOutAccount = Symbol('kigo signed-out account')

/** The providers are not loaded yet (their keys come from the store): classifyFailure answers 503 with Retry-After. */
export class ProvidersNotLoaded extends Unavailable {
  override name = 'ProvidersNotLoaded'
  constructor() {
    super('store_unavailable', 'The service cannot answer right now; try again shortly')
  }
}

const mismatchPage = () => messagePage({ title: 'Sign-in request expired', message: 'This sign-in request does not match your session. Go back to the site and sign in again.' })

const sessionExpired = 'This sign-in request has expired, or was started in another browser. Go back to the site and sign in again.'
const isSessionNotFound = (thrown: unknown) => (thrown as { name?: unknown } | null)?.name === 'SessionNotFound'

const outcomeOf = (status: number, route: string): Outcome => {
  if (status < 400) return 'ok'
  if (status >= 500) return 'unavailable'
  if (status === 401 || (status === 400 && route === 'oidc_token')) return 'bad_credentials'
  if (status === 403) return 'scope_denied'
  if (status === 429) return 'throttled'
  return 'malformed'
}

/** The largest form body the library reads (its own limit, lib/shared/selective_body.js). */
const libraryFormLimit = 56 * 1024

const routeNameOf = (path: string, { metadataPath, deviceRoute }: ApiAuthorization): string => {
  if (path === '/.well-known/openid-configuration' || path === metadataPath) return 'oidc_discovery'
  if (path === deviceRoute || path.startsWith(`${deviceRoute}/`)) return 'oauth2_device'
  const rest = path.slice(oidcPrefix.length + 1).split('/')[0] ?? ''
  const names: Record<string, string> = { auth: 'oidc_authorize', token: 'oidc_token', userinfo: 'oidc_userinfo', jwks: 'oidc_jwks', session: 'oidc_logout', interaction: 'oidc_interaction' }
  return names[rest] ?? 'oidc_other'
}

export async function oidcProvider(app: FastifyInstance, options: OidcOptions): Promise<void> {
  const { store } = options
  const account = await options.account.mount(app)
  const providers = options.providers
  const audited = auditTrail(options.audit, app.log)

  // A database outage is logged by its watch (one line at each end), not every refresh.
  const poll = setInterval(() => void providers.refresh().catch((err: Error) => isConnectionFailure(err) || app.log.warn({ err: { message: err.message } }, 'OpenID Connect key refresh failed; keeping the keys loaded')), options.keyPollMs ?? 30_000)
  poll.unref()
  const sweep = setInterval(() => void store.sweep().catch(() => undefined), options.sweepMs ?? 10 * 60_000)
  sweep.unref()
  app.addHook('onClose', async () => {
    clearInterval(poll)
    clearInterval(sweep)
  })

  // The deployment is the account area's (checked on every request of this plugin); its
  // provider is picked by the deployment, never by the raw host.
  const deploymentOf = (request: FastifyRequest) => {
    const found = providers.for(request.deployment!.name)
    if (!found) throw new ProvidersNotLoaded()
    return found
  }

  // Every provider request counted as method "oidc" (never a legacy method).
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeName ?? routeNameOf(request.url.split('?')[0]!, options.api)
    options.metrics?.authRequests.series('oidc', outcomeOf(reply.statusCode, route), route).inc()
    done()
  })

  // An expired interaction has a page of its own; the library's 4xx are the request's;
  // the store away is a 503. Pages answer as pages, the rest in the request's format.
  app.answerErrorsAs({
    wording: {
      request: (f) => errors.badRequest('bad_request', f.message),
      unavailable: () => errors.unavailable('store_unavailable', 'The service cannot answer right now; try again shortly'),
      internalMessage: 'Internal error',
    },
    known: (thrown) => (isSessionNotFound(thrown) ? errors.badRequest('bad_request', sessionExpired) : undefined),
    logMessage: 'OpenID Connect request failed',
    render: (request, reply, answer, thrown) => {
      if (isSessionNotFound(thrown)) return sendPage(reply, 400, messagePage({ title: 'Sign-in request expired', message: sessionExpired }))
      if (request.url.startsWith(`${oidcPrefix}/interaction`) || request.url.startsWith('/account')) return sendErrorPage(reply, answer)
      return sendError(request, reply, answer)
    },
  })

  // ---- the library's endpoints, given the untouched request ------------------------------------

  await app.register(async (passthrough) => {
    // The body is the library's to read (its own parsers), except a form: the gateway's
    // body budget reads forms as they arrive (plugins/body-parsers.ts), so a form is read
    // here, within the library's own limit, and handed to it whole.
    passthrough.removeAllContentTypeParsers()
    passthrough.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: libraryFormLimit }, (_req, body, done) => done(null, body))
    passthrough.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined))
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      request.routeName = routeNameOf(request.url.split('?')[0]!, options.api)
      const { handle } = deploymentOf(request)
      const origin = app.publicOrigin(request)
      // The public origin as the gateway decided it (trusted proxies only), in the one
      // form the library reads; whatever the client sent in these headers is replaced.
      // The host is the deployment's main host: the URLs the library writes (discovery,
      // redirects) name it, as the issuer does, on every alias.
      const headers = request.raw.headers
      ;(request.raw as IncomingMessage & { [requestedHost]?: string })[requestedHost] = origin.host
      headers['x-forwarded-proto'] = options.config.publicScheme
      headers['x-forwarded-host'] = request.deployment!.host
      headers['x-forwarded-for'] = origin.ip
      // The library takes an already read body from `req.body` once the stream has ended.
      if (Buffer.isBuffer(request.body)) (request.raw as IncomingMessage & { body?: Buffer }).body = request.body
      reply.hijack()
      await handle(request.raw, reply.raw)
    }
    const methods = ['GET', 'HEAD', 'POST', 'OPTIONS'] as const
    passthrough.route({ method: [...methods], url: '/.well-known/openid-configuration', handler })
    // OAuth 2.0 for the API (docs/oauth2.md): RFC 8414 metadata, and the device flow's page.
    const { metadataPath, deviceRoute } = options.api
    passthrough.route({ method: [...methods], url: metadataPath, handler })
    passthrough.route({ method: [...methods], url: deviceRoute, handler })
    passthrough.route({ method: [...methods], url: `${deviceRoute}/*`, handler })
    passthrough.route({ method: [...methods], url: `${oidcPrefix}/*`, handler })
  })

  // ---- sign-in and consent (the library's interactions) --------------------------------------

  const interactionPath = (uid: string) => `${oidcPrefix}/interaction/${uid}`
  const validUid = (uid: string) => /^[A-Za-z0-9_-]{1,64}$/.test(uid)

  app.get(`${oidcPrefix}/interaction/:uid`, async (request, reply) => {
    request.routeName = 'oidc_interaction'
    const { provider } = deploymentOf(request)
    const uid = (request.params as { uid: string }).uid
    if (!validUid(uid)) return sendPage(reply, 400, messagePage({ title: 'Bad request', message: 'This is not a sign-in request kigo made.' }))
    const details = await provider.interactionDetails(request.raw, reply.raw)
    if (details.uid !== uid) return sendPage(reply, 400, messagePage({ title: 'Sign-in request expired', message: 'This sign-in request was replaced by a newer one in this browser. Go back to the site and sign in again.' }))
    const client = await provider.Client.find(String(details.params.client_id ?? ''))
    if (!client) return sendPage(reply, 400, messagePage({ title: 'Unknown site', message: 'The site that sent you here is no longer registered with kigo.' }))
    // A visitor not signed in gets the account's sign-in form here, saying which site they
    // are signing in to (its registered name), and comes back to this step after it.
    const session = await account.requireSignIn(request, reply, { next: interactionPath(uid), context: `Sign in to continue to ${client.clientName ?? client.clientId}.` })
    if (!session) return reply
    const redirectOrigins = (client.redirectUris ?? []).map((u) => new URL(u).origin)
    if (details.prompt.name === 'login') {
      const to = await provider.interactionResult(request.raw, reply.raw, { login: { accountId: session.user.id } }, { mergeWithLastSubmission: false })
      return seeOther(reply, to, redirectOrigins)
    }
    if (details.prompt.name !== 'consent') return sendPage(reply, 400, messagePage({ title: 'Bad request', message: 'kigo cannot complete this sign-in request.' }))
    // The consent step is for the user the interaction signed in, shown to that user only
    // (another user holding its cookie is not shown it), as the confirmation checks too.
    if (details.session?.accountId !== session.user.id) return sendPage(reply, 400, mismatchPage())
    const scopes = String(details.params.scope ?? '').split(' ').filter((s) => s !== '')
    // Who registered the site and how many people signed in to it, for the person deciding.
    const registered = await store.findClient(client.clientId)
    const registrant = registered && { owner: registered.ownerId, users: await store.countSignedInUsers(registered.clientId), homeUrl: null }
    return sendPage(
      reply,
      200,
      // A device flow has no redirect: the user goes back to their device.
      oidcConsentPage({ user: session.user, csrfToken: session.csrfToken, uid, clientName: client.clientName ?? client.clientId, redirectsTo: details.params.redirect_uri ? new URL(String(details.params.redirect_uri)).host : null, scopes, ...(registrant ? { registrant } : {}) }),
      redirectOrigins,
    )
  })

  app.post(`${oidcPrefix}/interaction/:uid/confirm`, async (request, reply) => {
    request.routeName = 'oidc_interaction'
    const { provider } = deploymentOf(request)
    const posted = await account.signedInPost(request, reply)
    if (!posted) return reply
    const user = posted.session.user
    const uid = (request.params as { uid: string }).uid
    const details = await provider.interactionDetails(request.raw, reply.raw)
    if (details.uid !== uid || details.prompt.name !== 'consent' || details.session?.accountId !== user.id) return sendPage(reply, 400, mismatchPage())
    const decision = field(posted.form, 'decision')
    if (decision !== 'allow' && decision !== 'deny') return sendPage(reply, 400, messagePage({ title: 'Bad form', message: 'Choose Allow or Deny.' }))
    const clientId = String(details.params.client_id)
    const client = await provider.Client.find(clientId)
    const redirectOrigins = (client?.redirectUris ?? []).map((u) => new URL(u).origin)
    let result: Record<string, unknown>
    if (decision === 'deny') {
      result = { error: 'access_denied', error_description: 'The user denied the request' }
    } else {
      const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId: user.id, clientId })
      const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> }
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
      for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '))
      result = { consent: { grantId: await grant.save() } }
    }
    const to = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: true })
    return seeOther(reply, to, redirectOrigins)
  })

  // ---- the account page's sites -----------------------------------------------------------------

  app.post('/account/oidc-sites/revoke', async (request, reply) => {
    request.routeName = 'account'
    const read = await account.signedInPost(request, reply)
    if (!read) return reply
    const clientId = field(read.form, 'client_id')
    if (clientId === null || clientId === '') return sendPage(reply, 400, messagePage({ title: 'Bad form', message: 'Which site? The form named none.' }))
    const name = (await store.findClient(clientId))?.name ?? 'this site'
    const asked = account.confirmFirst(reply, read.session, read.form, { action: '/account/oidc-sites/revoke', title: `Revoke ${name}'s access?`, message: `${name} can no longer use your kigo account; the next time you sign in there, kigo asks you again.`, button: 'Revoke access', fields: { client_id: clientId }, cancel: '/account#oidc-sites' })
    if (asked) return asked
    const grants = await store.revokeSite(read.session.user.id, clientId)
    if (grants > 0) await audited(account.actor(request, read.session), { kind: 'oidc', action: 'account.oidc_revoke', target: clientId, before: { user: read.session.user.id, grants }, after: null })
    return seeOther(reply, '/account?notice=oidc_revoked#oidc-sites')
  })
}

/** The account page's section for `user` (listed sites, each with a revoke button). */
export async function accountSitesSection(store: OidcStore, user: Pick<User, 'id'>, csrfToken: string): Promise<SafeHtml> {
  return signedInSitesSection({ csrfToken, sites: await store.signedInSites(user.id) })
}
