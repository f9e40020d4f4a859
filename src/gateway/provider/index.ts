// The OAuth 1.0a provider and the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages) as one plugin of the gateway's
// public app: registered beside the catch-all forwarding route, whose more specific
// paths it takes over. Its failures are answered as pages on the account pages, in their
// formats on the token endpoints and the user-information API.
import type { FastifyInstance } from 'fastify'
import type { ErrorArea } from '../../common/error-answers.js'
import { errors } from '../../common/errors.js'
import { sendError } from '../../common/api-errors.js'
import { sendErrorPage } from '../account-area/error-page.js'
import { signatureAdviceOptions } from '../auth/authenticate.js'
import { registerAuthorize } from './authorize.js'
import { defaults, type ProviderContext, type ProviderOptions } from './context.js'
import { registerOAuthEndpoints } from './oauth-endpoints.js'
import { registerMigrationGuide } from './migration-guide.js'
import { registerDeveloperGuide } from './developer-guide.js'
import { registerUserInfo } from './user-info.js'

export type { ProviderOptions } from './context.js'

const isPagePath = (url: string) => url.startsWith('/account') || url.startsWith('/oauth/authorize')

/**
 * The identity store or the replay cache away: 503 so clients retry
 * (docs/operations.md#dependability); anything else beyond the request is a logged 500.
 */
const providerErrors: ErrorArea = {
  wording: {
    request: (f) => (f.status === 413 ? errors.tooLarge('body_too_large', 'The request body is too large') : undefined),
    unavailable: () => errors.unavailable('store_unavailable', 'The service cannot answer right now; try again shortly'),
    internalMessage: 'Internal error',
  },
  logMessage: 'provider request failed',
  render: (request, reply, answer) => (isPagePath(request.url) ? sendErrorPage(reply, answer) : sendError(request, reply, answer)),
}

export async function oauthProvider(app: FastifyInstance, options: ProviderOptions): Promise<void> {
  // The account area in this scope: the session cookie (session.ts), parsed for the
  // provider's routes only, and the deployment check: the provider answers for the
  // deployments only (docs/gateway.md#deployments; docs/api.md#statusesupdate rule 1 holds here too): a
  // request token, a session or a base string made for another Host is refused.
  await options.account.mount(app)
  const account = options.account.context
  const auth = account.config.auth
  const ctx: ProviderContext = {
    ...account,
    replay: options.replay,
    requestTokenTtlSeconds: options.requestTokenTtlSeconds ?? defaults.requestTokenTtlSeconds,
    realm: auth.realm,
    guideSections: options.guideSections ?? [],
    verifyOptions: {
      windowSeconds: auth.timestampWindowSeconds,
      hmacSha256: auth.hmacSha256,
      plaintext: auth.plaintext,
      advice: signatureAdviceOptions(auth, [account.config.domesticHost, account.config.globalHost]),
    },
  }

  app.answerErrorsAs(providerErrors)

  registerOAuthEndpoints(app, ctx)
  registerAuthorize(app, ctx)
  registerUserInfo(app, ctx)
  registerMigrationGuide(app, ctx)
  registerDeveloperGuide(app, ctx)
}
