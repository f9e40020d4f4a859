// The OAuth 1.0a provider's endpoints (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// the request and access token endpoints (oauth-endpoints.ts) and the authorize step
// (authorize.ts), in one plugin scope of the public app registered after the forwarding
// route, whose paths it takes over. The account area is mounted in the scope: the session
// cookie, and the deployment check, so the provider answers for the deployments only
// (docs/gateway.md#deployments): a request token, a session or a base string made for
// another Host is refused. Its failures are answered as pages on the authorize step, in
// the request's format on the token endpoints.
import type { FastifyInstance } from 'fastify'
import type { ErrorArea } from '../../common/error-answers.js'
import { sendError } from '../../common/api-errors.js'
import type { Config } from '../../common/config.js'
import { sendErrorPage } from '../account-area/error-page.js'
import { pageErrors } from '../account-area/host.js'
import type { AccountArea } from '../account-area/facade.js'
import { signatureAdviceOptions } from '../auth/authenticate.js'
import type { ReplayCache } from '../replay/types.js'
import { registerAuthorize } from './authorize.js'
import { registerOAuthEndpoints } from './oauth-endpoints.js'
import type { ProviderContext, ProviderStore } from './provider-context.js'

export interface ProviderOptions {
  config: Config
  store: ProviderStore
  /** Mounts the account area in the provider's scope (GatewayShared.account). */
  account: { mount(app: FastifyInstance): Promise<AccountArea> }
  replay: ReplayCache
  requestTokenTtlSeconds: number
  now: () => number
}

const isPagePath = (url: string) => url.startsWith('/oauth/authorize')

/**
 * In the account pages' words: the identity store or the replay cache away is a 503 so
 * clients retry (docs/operations.md#dependability); anything else beyond the request a
 * logged 500. A page on the authorize step, the request's format on the token endpoints.
 */
const providerErrors: ErrorArea = {
  wording: pageErrors.wording,
  logMessage: 'provider request failed',
  render: (request, reply, answer) => (isPagePath(request.url) ? sendErrorPage(reply, answer) : sendError(request, reply, answer)),
}

export async function oauthProvider(app: FastifyInstance, o: ProviderOptions): Promise<void> {
  const area = await o.account.mount(app)
  const auth = o.config.auth
  const ctx: ProviderContext = {
    store: o.store,
    area,
    replay: o.replay,
    requestTokenTtlSeconds: o.requestTokenTtlSeconds,
    realm: auth.realm,
    verifyOptions: {
      windowSeconds: auth.timestampWindowSeconds,
      hmacSha256: auth.hmacSha256,
      plaintext: auth.plaintext,
      advice: signatureAdviceOptions(auth, [o.config.domesticHost, o.config.globalHost]),
    },
    now: o.now,
  }
  app.answerErrorsAs(providerErrors)
  registerOAuthEndpoints(app, ctx)
  registerAuthorize(app, ctx)
}
