// Starts the gateway: its identity store, the replay cache and throttling (Redis or
// memory), the public app on the gateway port and the operator app on the admin port.
import pino, { type DestinationStream } from 'pino'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { adminTokenSource, type Config } from '../common/config.js'
import { loggerOptions } from '../common/logger.js'
import { createRedis, redisReady, type RedisClient } from '../common/redis.js'
import { openDb } from '../common/sql.js'
import { buildGatewayApp } from './app.js'
import { buildOperatorApp } from './operator/app.js'
import { createMetrics, watchPolicy } from './operator/metrics.js'
import { oauthProvider, type ProviderOptions } from './provider/index.js'
import { PolicyService } from './policy/service.js'
import { PolicyStore } from './policy/store.js'
import { effectiveState } from './policy/evaluate.js'
import { createReplayCaches } from './replay/create.js'
import { CachedCredentialLookup, openIdentityStore } from './store/index.js'
import { reservedUserIds } from './store/validation.js'
import { createFailureThrottle } from './throttle/create.js'
import { UsageRecorder } from './usage/recorder.js'
import { UsageStore } from './usage/store.js'
import { AppUseRecorder, AppUseStore } from './usage/app-use.js'
import { AuditStore } from './audit/store.js'

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
  /** OAuth provider lifetimes (request tokens, account sessions); SPEC §5 defaults otherwise. */
  provider?: Pick<ProviderOptions, 'requestTokenTtlSeconds' | 'sessionTtlSeconds' | 'visitorSessionTtlSeconds'>
}

async function coreAnswers(coreUrl: string): Promise<boolean> {
  try {
    const res = await fetch(new URL('/healthz', coreUrl), { signal: AbortSignal.timeout(1000) })
    await res.body?.cancel()
    return res.ok
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
    : (options.logStream ? pino(loggerOptions(config.logLevel, 'gateway'), options.logStream) : pino(loggerOptions(config.logLevel, 'gateway'))) as FastifyBaseLogger
  const store = await openIdentityStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, secretKey: config.secretKey })
  const redis: RedisClient | undefined = config.redisUrl ? createRedis(config.redisUrl) : undefined
  const metrics = createMetrics()
  const replay = createReplayCaches(config.auth, redis, {
    onError: (_err, method) => metrics.replayErrors.inc({ method }),
    onFailOpen: (method) => metrics.replayFailOpen.inc({ method }),
  })
  const throttle = createFailureThrottle(config.auth, redis, {
    onError: () => metrics.throttleErrors.inc(),
  })
  // The Redis client queues nothing while disconnected; give it a moment to connect so the
  // first requests after start-up are not refused. A Redis that is down at start-up is
  // not fatal: nonce checks fail closed until it answers.
  if (redis && !(await redisReady(redis, 3000)) && logger) logger.warn('Redis is not answering yet; nonce checks fail closed until it does')
  const lookup = new CachedCredentialLookup(store)

  // ---- migration controls and usage (SPEC §6.1, §6.3): shared through the gateway's store.
  const now = options.now ?? Date.now
  const opsDb = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 4 })
  const policy = new PolicyService(new PolicyStore(opsDb), {
    guideUrl: config.migration.guideUrl,
    refreshMs: config.migration.policyRefreshMs,
    now,
    onRefreshError: (err) => logger && logger.warn({ err: { message: (err as Error).message } }, 'migration policy refresh failed; keeping the last one read'),
  })
  await policy.start()
  // SPEC §2.11: IDs that are now reserved cannot be created; users who already have one
  // keep working, but their pages are unreachable, so the operator is told at start-up.
  const reserved = await opsDb.query<{ id: string }>('SELECT id FROM kigo_gateway.users WHERE lower(id) = ANY ($1::text[]) ORDER BY id', [[...reservedUserIds]])
  if (reserved.length > 0 && logger) {
    logger.warn({ users: reserved.map((r) => r.id) }, 'users with reserved IDs exist (SPEC §2.11): their public pages cannot be reached; rename or retire them')
  }
  watchPolicy(metrics, () => {
    const p = policy.current()
    return (['basic', 'wsse'] as const).map((method) => ({ method, state: effectiveState(p[method], now()), sunset: p[method].sunset }))
  })
  const usageStore = new UsageStore(opsDb)
  const usage = new UsageRecorder(usageStore, {
    flushMs: config.migration.usageFlushMs,
    now,
    onFlushError: (err) => logger && logger.warn({ err: { message: (err as Error).message } }, 'usage flush failed; counts kept for the next one'),
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

  const ready = async (): Promise<Record<string, boolean>> => {
    const checks: Record<string, boolean> = {}
    checks.store = await store.ping().then(() => true, () => false)
    if (redis) checks.redis = await redisReady(redis, 1000)
    checks.core = await coreAnswers(config.gateway.coreUrl)
    return checks
  }

  const deps = { config, lookup, replay, throttle, metrics, ready, logger, policy, usage: observer, ...(options.now ? { now: options.now } : {}) }
  const app = await buildGatewayApp(deps)
  await app.register(oauthProvider, { config, store, replay: replay.oauth, throttle, migration: { policy, usage: usageStore, appUse: appUseStore }, ...config.provider, ...options.provider, ...(options.now ? { now: options.now } : {}) })
  const operator = await buildOperatorApp({ ...deps, store, migration: { policy, usageStore, recorder: usage }, audit: new AuditStore(opsDb) })
  const url = await app.listen({ host: config.gateway.host, port: config.gateway.port })
  const adminUrl = await operator.listen({ host: config.gateway.adminHost, port: config.gateway.adminPort })
  if (logger) {
    const publicUrls = [`${config.publicScheme}://${config.domesticHost}`, `${config.publicScheme}://${config.globalHost}`]
    const tokenFrom = adminTokenSource(config)
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
      // The last usage counts are written before the pools close (SPEC §6.3, §7).
      policy.close()
      await usage.close().catch((err) => logger && logger.warn({ err: { message: (err as Error).message } }, 'final usage flush failed'))
      await appUse.close().catch(() => undefined)
      await opsDb.close().catch(() => undefined)
      await replay.close().catch(() => undefined)
      await throttle.close().catch(() => undefined)
      if (redis) redis.disconnect()
      await store.close()
    },
  }
}
