// The gateway's public application (docs/gateway.md#authentication): every request is authenticated by the
// route's rules, then forwarded unchanged to the core with a signed identity. Built
// without listening; server.ts listens. Each concern is a named plugin (src/gateway/plugins/)
// that declares what it needs; the order below is the order of their hooks.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import type { GatewayDeps } from './plugins/deps.js'
import { clientDeadlines, closeSilentConnections } from '../common/client-deadlines.js'
import { clientErrorHandler, frameworkErrors } from '../common/request-edges.js'
import { requestLogging } from '../common/request-logger.js'
import authentication from './plugins/authentication.js'
import bodyParsers from './plugins/body-parsers.js'
import errorAnswers from '../common/error-answers.js'
import { sendError } from '../common/api-errors.js'
import { errors, type FailureWording } from '../common/errors.js'
import forwarding from './plugins/forwarding.js'
import favicon from './plugins/favicon.js'
import health from './plugins/health.js'
import origin from './plugins/origin.js'
import deployments from './plugins/deployments.js'
import requestLog from './plugins/request-log.js'
import { guidePages } from './guides/index.js'
import { signedInReader } from './account-area/session.js'
import type { AccountAreaHost } from './account-area/index.js'
import type { FeatureRoutes, GuideSection } from './host/feature.js'

export { sendError } from '../common/api-errors.js'
export { repeatedCredentialHeader, toAuthRequest } from './plugins/authentication.js'
export type { PublicOrigin } from './plugins/origin.js'
export type { RequestDeployment } from './plugins/deployments.js'

export type { GatewayDeps }

/**
 * What the host mounts on the public app beside the forwarding: the account area and its
 * own pages (docs/gateway.md#the-oauth-provider-and-the-account-pages), the guides (with
 * the features' sections of the developer guide) and the user-information API, and each
 * feature's routes (features.ts), in the list's order.
 */
export interface AccountAreaOptions {
  account: AccountAreaHost
  guideSections: GuideSection[]
  features: ReadonlyArray<{ name: string; publicRoutes?: FeatureRoutes | undefined }>
}

/** What the public gateway's own routes throw, in the error catalogue. */
const gatewayWording: FailureWording = {
  request: (f) => {
    if (f.reason === 'URIError') return errors.badRequest('bad_request', 'The request URL is not validly percent-encoded')
    if (f.status === 413) return errors.tooLarge('body_too_large', 'The request body is too large')
    return undefined
  },
  unavailable: () => errors.unavailable(),
  internalMessage: 'Internal error',
}


export async function buildGatewayApp(deps: GatewayDeps, account?: AccountAreaOptions): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...requestLogging(),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    ...clientDeadlines(config.gateway.http),
    frameworkErrors: frameworkErrors(sendError),
    clientErrorHandler,
  })
  app.server.maxConnections = config.gateway.http.maxConnections
  closeSilentConnections(app, config.gateway.http.idleTimeoutMs)

  // First, so that every other hook and the request's log line run in its span.
  if (deps.tracing) await app.register(deps.tracing.serverSpans)
  await app.register(bodyParsers, { config })
  await app.register(errorAnswers, { wording: gatewayWording, render: sendError, logMessage: 'gateway error' })
  await app.register(requestLog, { metrics: deps.metrics })
  await app.register(health, { ready: deps.ready })
  await app.register(favicon)
  await app.register(origin, { config })
  await app.register(deployments, { config })
  await app.register(authentication, deps)
  await app.register(forwarding, {
    config,
    ...(deps.coreWatch ? { coreWatch: deps.coreWatch } : {}),
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
    // A public page names its reader when the account area's session says who they are.
    ...(account ? { reader: signedInReader(account.account.context.store, config.secretKey, account.account.context.now) } : {}),
  })
  if (account) {
    // The account area's own pages: sign-in, the account page, password reset, contact e-mail.
    await app.register(async (pages) => {
      await account.account.registerPages(pages)
    })
    await app.register(guidePages, { account: account.account, guideSections: account.guideSections })
    for (const feature of account.features) if (feature.publicRoutes) await app.register(feature.publicRoutes)
  }
  return app
}
