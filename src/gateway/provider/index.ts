// The OAuth 1.0a provider and the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages) as one plugin of the gateway's
// public app: registered beside the catch-all forwarding route, whose more specific
// paths it takes over. Its own error handler answers pages in HTML and the token
// endpoints and the user-information API in their formats.
import fastifyCookie from '@fastify/cookie'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors, failureResponse, type FailureWording } from '../../common/errors.js'
import { sendError } from '../plugins/errors.js'
import { signatureAdviceOptions } from '../auth/authenticate.js'
import { registerAccount } from './account.js'
import { registerAuthorize } from './authorize.js'
import { defaults, type ProviderContext, type ProviderOptions } from './context.js'
import { sendPage } from './html.js'
import { registerOAuthEndpoints } from './oauth-endpoints.js'
import { registerMigrationGuide } from './migration-guide.js'
import { registerDeveloperGuide } from './developer-guide.js'
import { messagePage } from './pages.js'
import { Sessions } from './session.js'
import { registerUserInfo } from './user-info.js'

export type { ProviderOptions } from './context.js'

/**
 * Everything here that can fail beyond the request is the identity store or the replay
 * cache: answer 503 so clients retry (docs/operations.md#dependability).
 */
const providerWording: FailureWording = {
  request: (f) => (f.status === 413 ? errors.tooLarge('body_too_large', 'The request body is too large') : undefined),
  unavailable: () => errors.unavailable('store_unavailable', 'The service cannot answer right now; try again shortly'),
  internalMessage: 'Internal error',
  faultIsUnavailable: true,
}

const isPagePath = (url: string) => url.startsWith('/account') || url.startsWith('/oauth/authorize')

export async function oauthProvider(app: FastifyInstance, options: ProviderOptions): Promise<void> {
  // The account session cookie (session.ts), parsed for the provider's routes only.
  await app.register(fastifyCookie)
  const now = options.now ?? Date.now
  const auth = options.config.auth
  const ctx: ProviderContext = {
    config: options.config,
    store: options.store,
    replay: options.replay,
    throttle: options.throttle,
    now,
    requestTokenTtlSeconds: options.requestTokenTtlSeconds ?? defaults.requestTokenTtlSeconds,
    sessions: new Sessions(
      options.store,
      {
        ttlSeconds: options.sessionTtlSeconds ?? defaults.sessionTtlSeconds,
        visitorTtlSeconds: options.visitorSessionTtlSeconds ?? defaults.visitorSessionTtlSeconds,
      },
      now,
    ),
    realm: auth.realm,
    ...(options.migration ? { migration: options.migration } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
    ...(options.passwordReset ? { passwordReset: options.passwordReset } : {}),
    accountSections: options.accountSections ?? [],
    guideSections: options.guideSections ?? [],
    verifyOptions: {
      windowSeconds: auth.timestampWindowSeconds,
      hmacSha256: auth.hmacSha256,
      plaintext: auth.plaintext,
      advice: signatureAdviceOptions(auth, [options.config.domesticHost, options.config.globalHost]),
    },
  }

  app.setErrorHandler((err: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = failureResponse(err, providerWording)
    // The detail of a dependency's failure stays in the log.
    if (apiError.status >= 500 && !(err instanceof ApiError)) request.log.error({ err: { message: err.message, name: err.name } }, 'provider dependency failed')
    if (!isPagePath(request.url)) return sendError(request, reply, apiError)
    for (const [k, v] of Object.entries(apiError.headers)) void reply.header(k, v)
    const title = apiError.status >= 500 ? 'Try again shortly' : 'Bad request'
    return sendPage(reply, apiError.status, messagePage({ title, message: apiError.status >= 500 ? 'kigo cannot answer right now. Try again in a moment.' : apiError.message }))
  })

  // The provider answers for the two deployments only (docs/api.md#statusesupdate rule 1 holds here too):
  // a request token, a session or a base string made for another Host is refused.
  const deployments = new Set([options.config.domesticHost.toLowerCase(), options.config.globalHost.toLowerCase()])
  app.addHook('onRequest', async (request) => {
    if (!deployments.has(app.publicOrigin(request).host)) {
      throw errors.badRequest('unknown_deployment', `The request host is not a deployment of this service; use ${[...deployments].join(' or ')} (to serve another host name, set KIGO_DOMESTIC_HOST and KIGO_GLOBAL_HOST, and KIGO_DOMESTIC_HOST_ALIASES or KIGO_GLOBAL_HOST_ALIASES for more names; see docs/operations.md)`)
    }
  })

  registerOAuthEndpoints(app, ctx)
  registerAuthorize(app, ctx)
  registerAccount(app, ctx)
  registerUserInfo(app, ctx)
  registerMigrationGuide(app, ctx)
  registerDeveloperGuide(app, ctx)
}
