// The one place the core listens (SPEC §1): opens the content store, builds the app,
// listens, and closes gracefully (SPEC §7: stop accepting, finish in-flight requests,
// then close the store).
import type { FastifyInstance } from 'fastify'
import type { Config } from '../common/config.js'
import { DependencyWatch } from '../common/dependency-watch.js'
import { loggerOptions } from '../common/logger.js'
import { buildCoreApp } from './app.js'
import { openContentStore } from './store/index.js'

export interface RunningCore {
  app: FastifyInstance
  /** `http://host:port` the core listens on. */
  url: string
  close(): Promise<void>
}

export async function startCore(config: Config, opts: { logger?: boolean | object } = {}): Promise<RunningCore> {
  // One line when a PostgreSQL outage starts and one when it ends (dependency-watch.ts);
  // its logger is the app's, made below.
  let probe: () => Promise<unknown> = async () => undefined
  const watch = new DependencyWatch('postgres', undefined, { probe: () => probe() })
  const store = await openContentStore({ dataDir: config.dataDir, timeouts: config.dependencies, watch, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}) })
  probe = () => store.ping()
  const base = loggerOptions(config.logLevel, 'kigo-core')
  const logger = opts.logger === false ? false : typeof opts.logger === 'object' ? { ...base, ...opts.logger } : base
  let app: FastifyInstance
  try {
    app = buildCoreApp({ config, store, logger })
    watch.logger = app.log
    await app.listen({ host: config.core.host, port: config.core.port })
  } catch (err) {
    await store.close().catch(() => undefined)
    throw err
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.core.port
  const host = config.core.host.includes(':') ? `[${config.core.host}]` : config.core.host
  let closing: Promise<void> | undefined
  return {
    app,
    url: `http://${host}:${port}`,
    close: () =>
      (closing ??= (async () => {
        try {
          // Fastify stops accepting, answers 503 to new requests on kept-alive
          // connections, and resolves once in-flight requests have finished.
          await app.close()
        } finally {
          watch.close()
          await store.close()
        }
      })()),
  }
}
