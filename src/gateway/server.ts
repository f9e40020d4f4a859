// Starts the gateway: opens its dependencies (one database handle, Redis when configured;
// dependencies.ts), builds the public app and the operator app, and listens on the gateway
// port and the admin port. The one file of the gateway that listens.
import pino, { type DestinationStream } from 'pino'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { adminTokenSource, type Config } from '../common/config.js'
import { loggerOptions } from '../common/logger.js'
import { startTracing } from '../common/tracing.js'
import { buildGatewayApp, type AccountAreaOptions } from './app.js'
import { openGatewayDependencies, type GatewayDependencies } from './dependencies.js'
import { buildOperatorApp } from './operator/app.js'
import type { GatewayDeps } from './plugins/deps.js'
import type { ProviderOptions } from './provider/index.js'
import { defaults as providerDefaults } from './provider/context.js'
import { accountSitesSection } from './oidc/index.js'
import { oidcGuideSection } from './oidc/guide.js'
import { noticeAccountSection } from './notices/account-section.js'
import type { UsageRecorder } from './usage/recorder.js'
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
  provider?: Pick<ProviderOptions, 'requestTokenTtlSeconds' | 'sessionTtlSeconds' | 'visitorSessionTtlSeconds'>
  /** How long a login API cert may be exchanged, seconds (config loginApi.certTtlSeconds otherwise). */
  loginApiCertTtlSeconds?: number
  /** How often this gateway looks for an OpenID Connect signing key rotated by another, ms (30 s otherwise). */
  oidcKeyPollMs?: number
}

/** The account area's options: the provider's, and the session lifetime it shares with the login API's and OpenID Connect's pages. */
function accountArea(config: Config, d: GatewayDependencies, options: GatewayStartOptions, now: () => number): AccountAreaOptions {
  const { store, policy, usage, metrics, audit, oidcStore } = d
  const accountSections = [
    (user: { id: string; name: string }, csrfToken: string) => accountSitesSection(oidcStore, user, csrfToken),
    // Migration notices (docs/gateway.md#migration-notices): the notice that applies to the user, with each client's endpoints.
    ...(d.notices ? [noticeAccountSection({ notices: d.notices, endpoints: d.endpointStore, policies: () => policy.current(), baseUrl: `${config.publicScheme}://${config.domesticHost}`, now })] : []),
  ]
  // One account area, one session lifetime: the login API's and OpenID Connect's pages
  // read and refresh the sessions the provider's pages made, under the same rules.
  const accountSessions = {
    sessionTtlSeconds: options.provider?.sessionTtlSeconds ?? config.provider.sessionTtlSeconds ?? providerDefaults.sessionTtlSeconds,
    visitorSessionTtlSeconds: options.provider?.visitorSessionTtlSeconds ?? providerDefaults.visitorSessionTtlSeconds,
  }
  const fixedNow = options.now ? { now: options.now } : {}
  return {
    provider: { config, store, replay: d.replay.oauth, throttle: d.throttle, migration: { policy, usage: d.usageStore, appUse: d.appUseStore }, accountSections, guideSections: [oidcGuideSection], audit, ...(d.passwordReset ? { passwordReset: d.passwordReset } : {}), contactEmail: d.contactEmail, ...config.provider, ...options.provider, ...fixedNow },
    // The legacy login API (docs/login-api.md): its sites and certs in the shared store.
    loginApi: {
      config,
      sites: d.sites,
      store,
      throttle: d.throttle,
      policy,
      usage,
      metrics,
      audit,
      ...accountSessions,
      ...(options.loginApiCertTtlSeconds ? { certTtlSeconds: options.loginApiCertTtlSeconds } : {}),
      ...fixedNow,
    },
    // The OpenID Connect provider (docs/oidc.md) on the same account area.
    oidc: { config, store: oidcStore, users: store, throttle: d.throttle, providers: d.oidcProviders, metrics, audit, now, ...accountSessions, ...(options.oidcKeyPollMs ? { keyPollMs: options.oidcKeyPollMs } : {}) },
    oidcClientPages: { store: oidcStore, users: store, throttle: d.throttle, audit, now, secretKey: config.secretKey, ...accountSessions, turnOn: { applications: d.oauth2.applications, consumers: store } },
  }
}

export async function startGateway(configIn: Config, options: GatewayStartOptions = {}): Promise<RunningGateway> {
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
    d = await openGatewayDependencies(config, { logger, now, ...(tracing ? { tracing } : {}) })
  } catch (err) {
    await tracing?.shutdown().catch(() => undefined)
    throw err
  }
  let app: FastifyInstance | undefined
  let operator: FastifyInstance | undefined
  try {
    // 2. The apps.
    const { usage, appUse } = d
    const observer: Pick<UsageRecorder, 'observe'> = {
      observe(decision, client, at, endpoint, deployment) {
        usage.observe(decision, client, at, endpoint, deployment)
        appUse.observe(decision, at)
        d.endpoints.observe(decision, client, at, endpoint)
      },
    }
    const deps: GatewayDeps = { config, lookup: d.lookup, replay: d.replay, throttle: d.throttle, metrics: d.metrics, ready: () => d.ready(), logger, policy: d.policy, usage: observer, coreWatch: d.coreWatch, bearer: d.oauth2.bearer, ...(options.now ? { now: options.now } : {}) }
    // The public app's steps as spans (the operator app is not traced).
    const publicDeps: GatewayDeps = tracing ? { ...deps, replay: tracedReplay(d.replay, tracing), policy: tracedPolicy(d.policy, tracing), tracing } : deps
    app = await buildGatewayApp(publicDeps, accountArea(config, d, options, now))
    operator = await buildOperatorApp({ ...deps, store: d.store, migration: { policy: d.policy, usageStore: d.usageStore, recorder: usage }, audit: d.audit, sites: d.sites, oidc: { store: d.oidcStore, providers: d.oidcProviders, applications: d.oauth2.applications }, operatorSessions: d.operatorSessions, userLocks: d.userLocks, contactEmails: d.contactEmail.store, ...(d.notices ? { notices: d.notices } : {}) })

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
    const listening = { app, operator }
    return {
      ...listening,
      url,
      adminUrl,
      async close() {
        await Promise.allSettled([listening.app.close(), listening.operator.close()])
        // The last usage counts are written before the database closes (docs/gateway.md#the-usage-report, docs/operations.md#dependability).
        await d.close()
        // The last spans are exported before the process goes.
        await tracing?.shutdown().catch(() => undefined)
      },
    }
  } catch (err) {
    await Promise.allSettled([app?.close(), operator?.close()])
    await d.close()
    await tracing?.shutdown().catch(() => undefined)
    throw err
  }
}
