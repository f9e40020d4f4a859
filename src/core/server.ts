// The one place the core listens (docs/gateway.md#topology): opens the content store, builds the app,
// listens, and closes gracefully (docs/operations.md#dependability: stop accepting, finish in-flight requests,
// then close the store).
import Fastify, { type FastifyInstance } from 'fastify'
import { closeSilentConnections } from '../common/client-deadlines.js'
import type { Config } from '../common/config.js'
import { DependencyWatch } from '../common/dependency-watch.js'
import { withExemplars } from '../common/labelled-metrics.js'
import { loggerOptions } from '../common/logger.js'
import { startTracing } from '../common/tracing.js'
import { hostNameCheck } from '../common/host-names.js'
import { metricsTokenHook } from '../common/metrics-token.js'
import { buildCoreApp } from './app.js'
import { createCoreMetrics } from './metrics.js'
import { openContentStore } from './store/index.js'

export interface RunningCore {
  app: FastifyInstance
  /** `http://host:port` the core listens on. */
  url: string
  /** `http://host:port` of the core's own /metrics (loopback by default). */
  metricsUrl: string
  close(): Promise<void>
}

export async function startCore(config: Config, opts: { logger?: boolean | object; embedded?: boolean } = {}): Promise<RunningCore> {
  // Traces (docs/operations.md#traces): undefined, and the SDK never loaded, unless configured.
  const tracing = await startTracing('core', { embedded: opts.embedded === true })
  // One line when a PostgreSQL outage starts and one when it ends (dependency-watch.ts);
  // its logger is the app's, made below.
  let probe: () => Promise<unknown> = async () => undefined
  const watch = new DependencyWatch('postgres', undefined, { probe: () => probe() })
  const store = await openContentStore({ dataDir: config.dataDir, timeouts: config.dependencies, watch, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}), ...(tracing ? { traced: tracing.db } : {}) })
  probe = () => store.ping()
  const base = loggerOptions(config.logLevel, 'kigo-core', tracing?.logMixin)
  const logger = opts.logger === false ? false : typeof opts.logger === 'object' ? { ...base, ...opts.logger } : base
  const metrics = createCoreMetrics({ poolStats: () => store.poolStats?.() })
  // A slow request's latency bucket names its trace (docs/operations.md#traces).
  if (tracing) withExemplars(metrics.registry, [metrics.duration], tracing.sampledTraceId)
  // The metrics listener is separate from the public one: the gateway forwards whatever
  // path a client asks for, and the core's internals are no client's business.
  const metricsApp = Fastify({ logger: false })
  closeSilentConnections(metricsApp)
  hostNameCheck(metricsApp, config.core.metricsHostNames, { port: "core's metrics port", setting: 'KIGO_CORE_METRICS_HOST_NAMES' })
  const metricsToken = metricsTokenHook(config.metricsToken)
  metricsApp.get('/metrics', { ...(metricsToken ? { onRequest: metricsToken } : {}) }, async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()))
  let app: FastifyInstance | undefined
  let metricsUrl: string
  try {
    app = buildCoreApp({ config, store, logger, metrics, ...(tracing ? { tracing } : {}) })
    watch.logger = app.log
    await app.listen({ host: config.core.host, port: config.core.port })
    metricsUrl = await metricsApp.listen({ host: config.core.metricsHost, port: config.core.metricsPort })
  } catch (err) {
    await metricsApp.close().catch(() => undefined)
    await app?.close().catch(() => undefined)
    await store.close().catch(() => undefined)
    await tracing?.shutdown().catch(() => undefined)
    throw err
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.core.port
  const host = config.core.host.includes(':') ? `[${config.core.host}]` : config.core.host
  const listening: FastifyInstance = app
  let closing: Promise<void> | undefined
  const url = `http://${host}:${port}`
  app.log.info({ url, metricsUrl, store: config.databaseUrl ? 'postgresql' : `embedded (${config.dataDir})` }, `core listening on ${url}; metrics at ${metricsUrl}/metrics`)
  return {
    app: listening,
    url,
    metricsUrl,
    close: () =>
      (closing ??= (async () => {
        try {
          // Fastify stops accepting, answers 503 to new requests on kept-alive
          // connections, and resolves once in-flight requests have finished.
          await listening.close()
          await metricsApp.close()
        } finally {
          watch.close()
          await store.close()
          // The last spans are exported before the process goes.
          await tracing?.shutdown().catch(() => undefined)
        }
      })()),
  }
}
