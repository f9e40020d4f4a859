// The one entry point that listens: `embedded` (both apps in one process, docs/operations.md#modes),
// `core` or `gateway` (production mode, one app per process).
import pino from 'pino'
import { ConfigError, loadConfig, type Config } from './common/config.js'
import { loggerOptions } from './common/logger.js'
import { dataDirSecrets } from './common/secrets.js'

type Mode = 'embedded' | 'core' | 'gateway'

interface Running {
  close(): Promise<void>
}

async function start(mode: Mode, config: Config): Promise<Running[]> {
  const running: Running[] = []
  if (mode === 'core' || mode === 'embedded') {
    const { startCore } = await import('./core/server.js')
    running.push(await startCore(config, { embedded: mode === 'embedded' }))
  }
  if (mode === 'gateway' || mode === 'embedded') {
    const { startGateway } = await import('./gateway/server.js')
    running.push(await startGateway(config, { embedded: mode === 'embedded' }))
  }
  return running
}

// The process's own lines (start-up failures, shutdown) are JSON like every other line,
// written synchronously to stderr so that they are out before the process exits.
function processLogger(level: string): pino.Logger {
  return pino({ ...loggerOptions(level, 'kigo') }, pino.destination({ fd: 2, sync: true }))
}

async function main(): Promise<void> {
  const mode = (process.argv[2] ?? 'embedded') as Mode
  if (!['embedded', 'core', 'gateway'].includes(mode)) {
    processLogger('info').fatal({ mode }, `kigo: unknown mode ${JSON.stringify(mode)}; use embedded, core or gateway`)
    process.exit(2)
  }
  let config: Config
  try {
    config = loadConfig({ secrets: dataDirSecrets })
  } catch (err) {
    if (err instanceof ConfigError) {
      processLogger('info').fatal(`kigo: configuration: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
  const log = processLogger(config.logLevel)
  let running: Running[] = []
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    // docs/operations.md#dependability: stop accepting, finish in-flight requests, close pools.
    log.info({ signal }, 'stopping: finishing requests in flight')
    const timer = setTimeout(() => {
      log.warn({ signal }, 'stopped before requests in flight finished (30 s)')
      process.exit(1)
    }, 30_000)
    timer.unref()
    for (const r of [...running].reverse()) await r.close().catch((err: Error) => log.warn({ err: { message: err.message } }, 'closing failed'))
    log.info({ signal }, 'stopped')
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  try {
    running = await start(mode, config)
  } catch (err) {
    log.fatal({ err: { message: (err as Error).message } }, `kigo: failed to start: ${(err as Error).message}`)
    for (const r of running) await r.close().catch(() => undefined)
    process.exit(1)
  }
}

void main()
