// The one place the core listens (SPEC §1): opens the content store, builds the app,
// listens, and closes gracefully (SPEC §7: stop accepting, finish in-flight requests,
// then close the store).
import type { FastifyInstance } from 'fastify'
import type { Config } from '../common/config.js'
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
  const store = await openContentStore({ dataDir: config.dataDir, ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}) })
  const base = loggerOptions(config.logLevel, 'kigo-core')
  const logger = opts.logger === false ? false : typeof opts.logger === 'object' ? { ...base, ...opts.logger } : base
  let app: FastifyInstance
  try {
    app = buildCoreApp({ config, store, logger })
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
          await store.close()
        }
      })()),
  }
}
