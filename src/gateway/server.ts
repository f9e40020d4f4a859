// Starts the gateway: its identity store, the replay cache and throttling (Redis or
// memory), the public app on the gateway port and the operator app on the admin port.
import pino, { type DestinationStream } from 'pino'
import { request } from 'undici'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { adminTokenSource, type Config } from '../common/config.js'
import { readinessCheckMs, withDeadline } from '../common/deadline.js'
import { DependencyWatch } from '../common/dependency-watch.js'
import { isConnectionFailure } from '../common/errors.js'
import { loggerOptions } from '../common/logger.js'
import { createRedis, redisReady, type RedisClient } from '../common/redis.js'
import { openDb } from '../common/sql.js'
import { buildGatewayApp } from './app.js'
import { buildOperatorApp } from './operator/app.js'
import { createMetrics, watchPolicy } from './metrics/metrics.js'
import { oauthProvider, type ProviderOptions } from './provider/index.js'
import { PolicyService } from './policy/service.js'
import { PolicyStore } from './policy/store.js'
import { effectiveState } from './policy/evaluate.js'
import { legacyMethods } from './policy/types.js'
import { createReplayCaches } from './replay/create.js'
import { CachedCredentialLookup, openIdentityStore } from './store/index.js'
import { reservedUserIds } from './store/validation.js'
import { createFailureThrottle } from './throttle/create.js'
import { UserLocks, UserLockStore } from './throttle/user-locks.js'
import { UsageRecorder } from './usage/recorder.js'
import { UsageStore } from './usage/store.js'
import { AppUseRecorder, AppUseStore } from './usage/app-use.js'
import { AuditStore } from './audit/store.js'
import { PasswordResetStore, smtpMailer } from './provider/password-reset.js'
import { OperatorSessionStore } from './operator/session-store.js'
import { defaults as providerDefaults } from './provider/context.js'
import { loginApi, LoginSiteStore } from './login-api/index.js'
import { gatewayMigrations } from './schema.js'
import { accountSitesSection, oidcProvider, OidcProviders, OidcStore } from './oidc/index.js'
import { oidcGuideSection } from './oidc/guide.js'
import { oidcClientPages } from './oidc/client-pages.js'

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
}

/**
 * undici's own request, which the forwarding already loaded: the global fetch would load
 * Node's bundled copy of undici on the first readiness check (measured: 250–300 ms of CPU
 * while starting).
 */
async function coreAnswers(coreUrl: string): Promise<boolean> {
  try {
    const res = await request(new URL('/healthz', coreUrl), { signal: AbortSignal.timeout(readinessCheckMs) })
    await res.body.dump()
    return res.statusCode >= 200 && res.statusCode < 300
  } catch {
    return false
  }
}

export async function startGateway(configIn: Config, options: GatewayStartOptions = {}): Promise<RunningGateway> {
  // A failed signature shows its whole base string by default where a developer runs kigo
  // on their own machine (embedded mode), not in production (issue: on when configured).
  const config: Config = configIn.auth.signatureBaseStringHeader === undefined
    ? { ...configIn, auth: { ...configIn.auth, signatureBaseStringHeader: options.embedded === true } }
    : configIn
  const logger: FastifyBaseLogger | false = options.logger === false
    ? false
    : (options.logStream ? pino(loggerOptions(config.logLevel, 'gateway'), options.logStream) : pino(loggerOptions(config.logLevel, 'gateway')))
  // One line when an outage of a dependency starts and one when it ends (dependency-watch.ts).
  const watchLog = logger || undefined
  let probeDb: () => Promise<unknown> = async () => undefined
  const pgWatch = new DependencyWatch('postgres', watchLog, { probe: () => probeDb() })
  const store = await openIdentityStore({ migrations: gatewayMigrations, databaseUrl: config.databaseUrl, dataDir: config.dataDir, secretKey: config.secretKey, timeouts: config.dependencies, watch: pgWatch })
  probeDb = () => store.ping()
  const redisWatch = new DependencyWatch('redis', watchLog, { probe: () => redis!.ping() })
  const redis: RedisClient | undefined = config.redisUrl
    ? createRedis(config.redisUrl, {
        commandTimeoutMs: config.dependencies.redisCommandTimeoutMs,
        connectTimeoutMs: config.dependencies.connectTimeoutMs,
        onError: (err) => redisWatch.failed(err),
      })
    : undefined
  redis?.on('ready', () => redisWatch.succeeded())
  const coreWatch = new DependencyWatch('core', watchLog)
  const metrics = createMetrics()
  const replay = createReplayCaches(config.auth, redis, {
    onError: (err, method) => {
      metrics.replayErrors.inc({ method })
      redisWatch.failed(err)
    },
    onFailOpen: (method) => metrics.replayFailOpen.inc({ method }),
  })
  // The Redis client queues nothing while disconnected; give it a moment to connect so the
  // first requests after start-up are not refused. A Redis that is down at start-up is
  // not fatal: nonce checks fail closed until it answers.
  if (redis && !(await redisReady(redis, 3000)) && logger) logger.warn('Redis is not answering yet; nonce checks fail closed until it does')
  const lookup = new CachedCredentialLookup(store)

  // ---- migration controls and usage (docs/gateway.md#the-migration-policy, docs/gateway.md#the-usage-report): shared through the gateway's store.
  const now = options.now ?? Date.now
  const opsDb = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 4, timeouts: config.dependencies, watch: pgWatch })
  const policy = new PolicyService(new PolicyStore(opsDb), {
    guideUrl: config.migration.guideUrl,
    refreshMs: config.migration.policyRefreshMs,
    now,
    // A database outage is logged by its watch (one line at each end), not every refresh.
    onRefreshError: (err) => logger && !isConnectionFailure(err) && logger.warn({ error: (err as Error).message }, 'migration policy refresh failed; keeping the last one read'),
  })
  await policy.start()
  // Operator locks on users (throttle/user-locks.ts), polled like the policy.
  const userLocks = new UserLocks(new UserLockStore(opsDb), {
    refreshMs: config.migration.policyRefreshMs,
    onRefreshError: (err) => logger && !isConnectionFailure(err) && logger.warn({ error: (err as Error).message }, 'user locks refresh failed; keeping the last ones read'),
  })
  await userLocks.start()
  const throttle = createFailureThrottle(config.auth, redis, {
    onError: (err) => {
      metrics.throttleErrors.inc()
      redisWatch.failed(err)
    },
  }, {
    locks: userLocks,
    onRefusal: (realm, rule) => metrics.throttleRefusals.inc({ realm, rule }),
  })
  // docs/api.md#pages: IDs that are now reserved cannot be created; users who already have one
  // keep working, but their pages are unreachable, so the operator is told at start-up.
  const reserved = await opsDb.query<{ id: string }>('SELECT id FROM kigo_gateway.users WHERE lower(id) = ANY ($1::text[]) ORDER BY id', [[...reservedUserIds]])
  if (reserved.length > 0 && logger) {
    logger.warn({ users: reserved.map((r) => r.id) }, 'users with reserved IDs exist (docs/api.md#pages): their public pages cannot be reached; rename or retire them')
  }
  watchPolicy(metrics, () => {
    const p = policy.current()
    return legacyMethods.map((method) => ({ method, state: effectiveState(p[method], now()), sunset: p[method].sunset }))
  })
  const usageStore = new UsageStore(opsDb, { maxClientsPerUser: config.migration.usageMaxClientsPerUser })
  const usage = new UsageRecorder(usageStore, {
    flushMs: config.migration.usageFlushMs,
    retainRowsMs: config.migration.usageRetentionDays * 86_400_000,
    now,
    onFlushError: (err) => logger && !isConnectionFailure(err) && logger.warn({ error: (err as Error).message }, 'usage flush failed; counts kept for the next one'),
  })
  usage.start()
  // When each authorized application last acted for its user (the account page).
  const appUseStore = new AppUseStore(opsDb)
  const appUse = new AppUseRecorder(appUseStore, {
    flushMs: config.migration.usageFlushMs,
    onFlushError: (err) => logger && logger.warn({ err: { message: (err as Error).message } }, 'last-used flush failed; kept for the next one'),
  })
  appUse.start()
  const observer: Pick<UsageRecorder, 'observe'> = {
    observe(decision, client, at) {
      usage.observe(decision, client, at)
      appUse.observe(decision, at)
    },
  }
  // ---- end migration controls

  // Every check runs at once and each is bounded, so /readyz answers within 2 s even when a
  // dependency accepts connections and never answers; the body names the one that failed.
  const answers = (work: () => Promise<unknown>, what: string) =>
    withDeadline(Promise.resolve().then(work), readinessCheckMs, what).then(() => true, () => false)
  const ready = async (): Promise<Record<string, boolean>> => {
    const [storeOk, redisOk, coreOk] = await Promise.all([
      answers(() => Promise.all([store.ping(), opsDb.ping()]), 'store'),
      redis ? answers(() => redis.ping(), 'redis') : Promise.resolve(undefined),
      coreAnswers(config.gateway.coreUrl),
    ])
    return { store: storeOk, ...(redisOk === undefined ? {} : { redis: redisOk }), core: coreOk }
  }

  // ---- the OpenID Connect provider (docs/oidc.md): its state and keys in the shared store.
  const oidcStore = new OidcStore(opsDb, config.secretKey, now)
  const oidcProviders = new OidcProviders({ config, store: oidcStore, users: store, now, usage, ...(logger ? { log: (message: string) => logger.info(message) } : {}) })
  await oidcProviders.load()

  const deps = { config, lookup, replay, throttle, metrics, ready, logger, policy, usage: observer, coreWatch, ...(options.now ? { now: options.now } : {}) }
  const app = await buildGatewayApp(deps)
  const accountSections = [(user: { id: string; name: string }, csrfToken: string) => accountSitesSection(oidcStore, user, csrfToken)]
  const audit = new AuditStore(opsDb)
  // "Forgot your password?" mails a link when an SMTP server is configured.
  const passwordReset = config.mail.smtpUrl === null ? undefined : { store: new PasswordResetStore(opsDb), mailer: smtpMailer(config.mail.smtpUrl, config.mail.from), ttlSeconds: config.mail.resetTtlSeconds }
  await app.register(oauthProvider, { config, store, replay: replay.oauth, throttle, migration: { policy, usage: usageStore, appUse: appUseStore }, accountSections, guideSections: [oidcGuideSection], audit, ...(passwordReset ? { passwordReset } : {}), ...config.provider, ...options.provider, ...(options.now ? { now: options.now } : {}) })
  // One account area, one session lifetime: the login API's and OpenID Connect's pages
  // read and refresh the sessions the provider's pages made, under the same rules.
  const accountSessions = {
    sessionTtlSeconds: options.provider?.sessionTtlSeconds ?? config.provider.sessionTtlSeconds ?? providerDefaults.sessionTtlSeconds,
    visitorSessionTtlSeconds: options.provider?.visitorSessionTtlSeconds ?? providerDefaults.visitorSessionTtlSeconds,
  }
  // The legacy login API (docs/login-api.md): its sites and certs in the shared store.
  const sites = new LoginSiteStore(opsDb, config.secretKey)
  await app.register(loginApi, {
    config,
    sites,
    store,
    policy,
    usage,
    metrics,
    audit,
    ...accountSessions,
    ...(options.loginApiCertTtlSeconds ? { certTtlSeconds: options.loginApiCertTtlSeconds } : {}),
    ...(options.now ? { now: options.now } : {}),
  })
  // The OpenID Connect provider (docs/oidc.md) on the same account area.
  await app.register(oidcProvider, {
    config,
    store: oidcStore,
    users: store,
    providers: oidcProviders,
    metrics,
    now,
    ...accountSessions,
  })
  // The account pages where users register their own relying parties (docs/oidc.md#registering-a-site).
  await app.register(oidcClientPages, {
    store: oidcStore,
    users: store,
    audit,
    now,
    ...accountSessions,
  })
  const operator = await buildOperatorApp({ ...deps, store, migration: { policy, usageStore, recorder: usage }, audit, sites, oidc: { store: oidcStore, providers: oidcProviders }, operatorSessions: new OperatorSessionStore(opsDb), userLocks })
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

  return {
    app,
    operator,
    url,
    adminUrl,
    async close() {
      await Promise.allSettled([app.close(), operator.close()])
      // The last usage counts are written before the pools close (docs/gateway.md#the-usage-report, docs/operations.md#dependability).
      policy.close()
      userLocks.close()
      await usage.close().catch((err) => logger && logger.warn({ error: (err as Error).message }, 'final usage flush failed'))
      await appUse.close().catch(() => undefined)
      await opsDb.close().catch(() => undefined)
      await replay.close().catch(() => undefined)
      await throttle.close().catch(() => undefined)
      if (redis) redis.disconnect()
      await store.close()
      for (const w of [pgWatch, redisWatch, coreWatch]) w.close()
    },
  }
}
