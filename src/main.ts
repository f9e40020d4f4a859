// The one entry point that listens: `embedded` (both apps in one process, SPEC §1.1),
// `core` or `gateway` (production mode, one app per process).
import { ConfigError, loadConfig, type Config } from './common/config.js'
import { dataDirSecrets } from './common/secrets.js'

type Mode = 'embedded' | 'core' | 'gateway'

interface Running {
  close(): Promise<void>
}

async function start(mode: Mode, config: Config): Promise<Running[]> {
  const running: Running[] = []
  if (mode === 'core' || mode === 'embedded') {
    const { startCore } = await import('./core/server.js')
    running.push(await startCore(config))
  }
  if (mode === 'gateway' || mode === 'embedded') {
    const { startGateway } = await import('./gateway/server.js')
    running.push(await startGateway(config, { embedded: mode === 'embedded' }))
  }
  return running
}

async function main(): Promise<void> {
  const mode = (process.argv[2] ?? 'embedded') as Mode
  if (!['embedded', 'core', 'gateway'].includes(mode)) {
    console.error(`kigo: unknown mode ${JSON.stringify(mode)}; use embedded, core or gateway`)
    process.exit(2)
  }
  let config: Config
  try {
    config = loadConfig({ secrets: dataDirSecrets })
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`kigo: configuration: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
  let running: Running[] = []
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    // SPEC §7: stop accepting, finish in-flight requests, close pools.
    const timer = setTimeout(() => process.exit(1), 30_000)
    timer.unref()
    for (const r of [...running].reverse()) await r.close().catch(() => undefined)
    process.stderr.write(`kigo: stopped on ${signal}\n`)
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  try {
    running = await start(mode, config)
  } catch (err) {
    console.error(`kigo: failed to start: ${(err as Error).message}`)
    for (const r of running) await r.close().catch(() => undefined)
    process.exit(1)
  }
}

void main()
