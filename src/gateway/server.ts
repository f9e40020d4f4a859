// Starts the gateway: its identity store, the replay cache and throttling (Redis or
// memory), the public app on the gateway port and the operator app on the admin port.
import pino, { type DestinationStream } from 'pino'
import { request } from 'undici'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../common/config.js'
import { loggerOptions } from '../common/logger.js'
import { createRedis, redisReady, type RedisClient } from '../common/redis.js'
import { openDb } from '../common/sql.js'
import { buildGatewayApp } from './app.js'
import { buildOperatorApp } from './operator/app.js'
import { createMetrics } from './operator/metrics.js'
import { oauthProvider, type ProviderOptions } from './provider/index.js'
import { PolicyService } from './policy/service.js'
import { PolicyStore } from './policy/store.js'
import { createReplayCaches } from './replay/create.js'
import { CachedCredentialLookup, openIdentityStore } from './store/index.js'
import { createFailureThrottle } from './throttle/create.js'
import { UsageRecorder } from './usage/recorder.js'
import { UsageStore } from './usage/store.js'

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

/**
 * undici's own request, which the forwarding already loaded: the global fetch would load
 * Node's bundled copy of undici on the first readiness check (measured: 250–300 ms of CPU
 * while starting).
 */
async function coreAnswers(coreUrl: string): Promise<boolean> {
  try {
    const res = await request(new URL('/healthz', coreUrl), { signal: AbortSignal.timeout(1000) })
    await res.body.dump()
    return res.statusCode >= 200 && res.statusCode < 300
  } catch {
    return false
  }
}

export async function startGateway(config: Config, options: GatewayStartOptions = {}): Promise<RunningGateway> {
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
  const usageStore = new UsageStore(opsDb)
  const usage = new UsageRecorder(usageStore, {
    flushMs: config.migration.usageFlushMs,
    now,
    onFlushError: (err) => logger && logger.warn({ err: { message: (err as Error).message } }, 'usage flush failed; counts kept for the next one'),
  })
  usage.start()
  // ---- end migration controls

  const ready = async (): Promise<Record<string, boolean>> => {
    const checks: Record<string, boolean> = {}
    checks.store = await store.ping().then(() => true, () => false)
    if (redis) checks.redis = await redisReady(redis, 1000)
    checks.core = await coreAnswers(config.gateway.coreUrl)
    return checks
  }

  const deps = { config, lookup, replay, throttle, metrics, ready, logger, policy, usage, ...(options.now ? { now: options.now } : {}) }
  const app = await buildGatewayApp(deps)
  await app.register(oauthProvider, { config, store, replay: replay.oauth, throttle, ...config.provider, ...options.provider, ...(options.now ? { now: options.now } : {}) })
  const operator = await buildOperatorApp({ ...deps, store, migration: { policy, usageStore, recorder: usage } })
  const url = await app.listen({ host: config.gateway.host, port: config.gateway.port })
  const adminUrl = await operator.listen({ host: config.gateway.adminHost, port: config.gateway.adminPort })
  if (logger) logger.info({ url, adminUrl, mode: options.embedded ? 'embedded' : 'production' }, 'gateway listening')

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
      await opsDb.close().catch(() => undefined)
      await replay.close().catch(() => undefined)
      await throttle.close().catch(() => undefined)
      if (redis) redis.disconnect()
      await store.close()
    },
  }
}
