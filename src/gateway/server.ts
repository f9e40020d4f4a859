// Starts the gateway: opens its dependencies (one database handle, Redis when configured;
// dependencies.ts), builds the public app and the operator app (buildGateway), and listens
// on the gateway port and the admin port (startGateway). The one file of the gateway that listens.
import pino, { type DestinationStream } from 'pino'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { adminTokenSource, type Config } from '../common/config.js'
import { loggerOptions } from '../common/logger.js'
import { startTracing } from '../common/tracing.js'
import { buildGatewayApp, type AccountAreaOptions } from './app.js'
import { sessionDefaults } from './account-area/host.js'
import { openGatewayDependencies, type AccountSessionLifetimes, type GatewayDependencies } from './dependencies.js'
import { buildOperatorApp } from './operator/app.js'
import type { GatewayDeps } from './plugins/deps.js'
import { tracedPolicy, tracedReplay } from './tracing.js'

export interface RunningGateway {
  app: FastifyInstance
  operator: FastifyInstance
  url: string
  adminUrl: string
  close(): Promise<void>
}

export interface GatewayStartOptions {
  /** Embedded mode: started beside the core in one process. */
  embedded?: boolean
  /** false for tests; default: pino at config.logLevel. */
  logger?: boolean
  /** Where the log lines go instead of stdout (tests read them). */
  logStream?: DestinationStream
  now?: () => number
  /** OAuth provider lifetimes (request tokens, account sessions); docs/gateway.md#the-oauth-provider-and-the-account-pages defaults otherwise. */
  provider?: { requestTokenTtlSeconds?: number; sessionTtlSeconds?: number; visitorSessionTtlSeconds?: number }
  /** How long a login API cert may be exchanged, seconds (config loginApi.certTtlSeconds otherwise). */
  loginApiCertTtlSeconds?: number
  /** How often this gateway looks for an OpenID Connect signing key rotated by another, ms (30 s otherwise). */
  oidcKeyPollMs?: number
}

/**
 * One account area, one session lifetime: the provider's pages, the login API's and OpenID
 * Connect's read and refresh the same sessions, under the same rules.
 */
function accountLifetimes(config: Config, options: GatewayStartOptions): AccountSessionLifetimes {
  return {
    sessionTtlSeconds: options.provider?.sessionTtlSeconds ?? config.provider.sessionTtlSeconds ?? sessionDefaults.sessionTtlSeconds,
    visitorSessionTtlSeconds: options.provider?.visitorSessionTtlSeconds ?? sessionDefaults.visitorSessionTtlSeconds,
  }
}

/** What the public app mounts beside the forwarding: the account area, the guides, the features' routes. */
function accountArea(d: GatewayDependencies): AccountAreaOptions {
  return {
    account: d.account,
    guideSections: d.guideSections,
    features: d.features.map(({ name, adds }) => ({ name, publicRoutes: adds.publicRoutes })),
  }
}

/** The gateway's two apps on their dependencies, built and not listening: startGateway listens on them; tests answer through `inject`. */
export interface BuiltGateway {
  /** The public app. */
  app: FastifyInstance
  /** The operator app: the operator API, the dashboard and the metrics. */
  operator: FastifyInstance
  config: Config
  logger: FastifyBaseLogger | false
  /** Closes both apps, then the dependencies (the last usage counts are written before the database closes), then tracing. */
  close(): Promise<void>
}

/** Opens the gateway's dependencies and builds its public app and its operator app, without listening. */
export async function buildGateway(configIn: Config, options: GatewayStartOptions = {}): Promise<BuiltGateway> {
  // A failed signature shows its whole base string by default where a developer runs kigo
  // on their own machine (embedded mode), not in production (issue: on when configured).
  const config: Config = configIn.auth.signatureBaseStringHeader === undefined
    ? { ...configIn, auth: { ...configIn.auth, signatureBaseStringHeader: options.embedded === true } }
    : configIn
  // Traces (docs/operations.md#traces): undefined, and the SDK never loaded, unless configured.
  const tracing = await startTracing('gateway', { embedded: options.embedded === true })
  const logOptions = loggerOptions(config.logLevel, 'gateway', tracing?.logMixin)
  const logger: FastifyBaseLogger | false = options.logger === false
    ? false
    : (options.logStream ? pino(logOptions, options.logStream) : pino(logOptions))
  const now = options.now ?? Date.now

  // 1. The dependencies.
  let d: GatewayDependencies
  try {
    d = await openGatewayDependencies(config, {
      logger,
      now,
      account: accountLifetimes(config, options),
      host: {
        ...(options.provider?.requestTokenTtlSeconds ? { requestTokenTtlSeconds: options.provider.requestTokenTtlSeconds } : {}),
        ...(options.loginApiCertTtlSeconds ? { loginApiCertTtlSeconds: options.loginApiCertTtlSeconds } : {}),
        ...(options.oidcKeyPollMs ? { oidcKeyPollMs: options.oidcKeyPollMs } : {}),
      },
      ...(tracing ? { tracing } : {}),
    })
  } catch (err) {
    await tracing?.shutdown().catch(() => undefined)
    throw err
  }
  let app: FastifyInstance | undefined
  let operator: FastifyInstance | undefined
  try {
    // 2. The apps.
    const deps: GatewayDeps = { config, lookup: d.lookup, replay: d.replay, throttle: d.throttle, metrics: d.metrics, ready: () => d.ready(), logger, policy: d.policy, usage: d.observer, coreWatch: d.coreWatch, ...(d.provided.bearer ? { bearer: d.provided.bearer } : {}), ...(options.now ? { now: options.now } : {}) }
    // The public app's steps as spans (the operator app is not traced).
    const publicDeps: GatewayDeps = tracing ? { ...deps, replay: tracedReplay(d.replay, tracing), policy: tracedPolicy(d.policy, tracing), tracing } : deps
    app = await buildGatewayApp(publicDeps, accountArea(d))
    operator = await buildOperatorApp({
      ...deps,
      store: d.store,
      audit: d.audit,
      operatorSessions: d.operatorSessions,
      userLocks: d.userLocks,
      contactEmails: d.contactEmail.store,
      features: d.features.map(({ name, adds }) => ({ name, operatorRoutes: adds.operatorRoutes, operatorPages: adds.operatorPages })),
    })
  } catch (err) {
    await Promise.allSettled([app?.close(), operator?.close()])
    await d.close()
    await tracing?.shutdown().catch(() => undefined)
    throw err
  }
  const built = { app, operator }
  return {
    ...built,
    config,
    logger,
    async close() {
      await Promise.allSettled([built.app.close(), built.operator.close()])
      // The last usage counts are written before the database closes (docs/gateway.md#the-usage-report, docs/operations.md#dependability).
      await d.close()
      // The last spans are exported before the process goes.
      await tracing?.shutdown().catch(() => undefined)
    },
  }
}

export async function startGateway(configIn: Config, options: GatewayStartOptions = {}): Promise<RunningGateway> {
  const gateway = await buildGateway(configIn, options)
  const { app, operator, config, logger } = gateway
  try {
    // 3. Listening.
    const url = await app.listen({ host: config.gateway.host, port: config.gateway.port })
    const adminUrl = await operator.listen({ host: config.gateway.adminHost, port: config.gateway.adminPort })
    if (logger) {
      const publicUrls = [`${config.publicScheme}://${config.domesticHost}`, `${config.publicScheme}://${config.globalHost}`]
      const tokenFrom = adminTokenSource(configIn)
      logger.info(
        { url, adminUrl, publicUrls, coreUrl: config.gateway.coreUrl, adminTokenFrom: tokenFrom, mode: options.embedded ? 'embedded' : 'production' },
        `gateway listening on ${url} (deployments ${publicUrls.join(' and ')}); operator API, dashboard and metrics on ${adminUrl} (admin token from ${tokenFrom}); core at ${config.gateway.coreUrl}`,
      )
    }
    return { app, operator, url, adminUrl, close: () => gateway.close() }
  } catch (err) {
    await gateway.close()
    throw err
  }
}
