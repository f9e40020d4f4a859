// The production topology the benchmark measures (SPEC §1.1, §8): a fresh PostgreSQL
// database, the core and the gateway as separate processes, and the bare reference
// proxy in front of the same core. Also the embedded mode, for its idle memory.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort, rssMiB, spawnApp, waitReady, type AppProcess } from './processes.js'

export const defaultDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/test'
export const defaultRedisUrl = 'redis://127.0.0.1:6379'

const mainJs = fileURLToPath(new URL('../src/main.js', import.meta.url))

/**
 * The Node.js flags the production commands run the apps with (Dockerfile, `npm run
 * start:gateway`, `npm run start:core`): the benchmark measures what is deployed.
 */
export const productionNodeFlags = ['--max-semi-space-size=8', '--heap-growing-percent=50']
const bareProxyJs = fileURLToPath(new URL('./bare-proxy.js', import.meta.url))

export interface Topology {
  core: AppProcess
  gateway: AppProcess
  bare: AppProcess
  ports: { core: number; gateway: number; admin: number; bare: number }
  /** `localhost:<gateway port>`: the domestic host, sent as Host on every request. */
  host: string
  adminToken: string
  stop(): Promise<void>
}

/** The environment without any kigo setting of the caller's, so only ours apply. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('KIGO_') || k === 'DATABASE_URL' || k === 'REDIS_URL' || k === 'LOG_LEVEL') continue
    env[k] = v
  }
  return env
}

/** CREATE DATABASE kigo_bench_<random> beside the one `baseUrl` names; returns its URL and a drop. */
export async function createBenchDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `kigo_bench_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 3000 })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  let dropped = false
  return {
    url: url.toString(),
    async drop() {
      if (dropped) return
      dropped = true
      const c = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 3000 })
      await c.connect()
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await c.end()
      }
    },
  }
}

/**
 * Runs `start` again (with new free ports) when a port chosen free was taken before the
 * app could listen on it: the kernel hands out the same range for outgoing connections.
 */
async function retryingTakenPorts<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await start()
    } catch (err) {
      if (i >= attempts || !(err as Error).message.includes('EADDRINUSE')) throw err
    }
  }
}

export function startTopology(opts: { databaseUrl: string; redisUrl: string; profileDir?: string }): Promise<Topology> {
  return retryingTakenPorts(() => startTopologyOnce(opts))
}

async function startTopologyOnce(opts: { databaseUrl: string; redisUrl: string; profileDir?: string }): Promise<Topology> {
  // V8 CPU profiles of the core and the gateway, written when they stop (node --cpu-prof).
  const profile = opts.profileDir ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${opts.profileDir}`] : []
  const [core, gateway, admin, bare] = [await freePort(), await freePort(), await freePort(), await freePort()]
  const host = `localhost:${gateway}`
  const adminToken = randomBytes(24).toString('base64url')
  const dataDir = mkdtempSync(join(tmpdir(), 'kigo-bench-'))
  const env: NodeJS.ProcessEnv = {
    ...cleanEnv(),
    DATABASE_URL: opts.databaseUrl,
    REDIS_URL: opts.redisUrl,
    KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
    KIGO_ADMIN_TOKEN: adminToken,
    KIGO_GATEWAY_PORT: String(gateway),
    KIGO_CORE_PORT: String(core),
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_ADMIN_PORT: String(admin),
    KIGO_CORE_URL: `http://127.0.0.1:${core}`,
    KIGO_DOMESTIC_HOST: host,
    KIGO_GATEWAY_BIND: '127.0.0.1',
    KIGO_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  }
  const started: AppProcess[] = []
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()))
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    // The core first: the gateway's readiness includes reaching it.
    const coreApp = spawnApp('core', [...productionNodeFlags, ...profile, mainJs, 'core'], env)
    started.push(coreApp)
    await waitReady(coreApp, `http://127.0.0.1:${core}/readyz`)
    const gatewayApp = spawnApp('gateway', [...productionNodeFlags, ...profile, mainJs, 'gateway'], env)
    started.push(gatewayApp)
    const bareApp = spawnApp('bare proxy', [bareProxyJs], {
      ...cleanEnv(),
      BARE_PROXY_PORT: String(bare),
      BARE_PROXY_UPSTREAM: `http://127.0.0.1:${core}`,
      BARE_PROXY_TIMEOUT_MS: '10000',
    })
    started.push(bareApp)
    await waitReady(gatewayApp, `http://127.0.0.1:${gateway}/readyz`)
    await waitReady(bareApp, `http://127.0.0.1:${bare}/readyz`)
    return { core: coreApp, gateway: gatewayApp, bare: bareApp, ports: { core, gateway, admin, bare }, host, adminToken, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/** Starts embedded mode (SPEC §1.1) on free ports and a temp data directory, and reads its RSS once idle. */
export function embeddedIdleRss(settleMs: number): Promise<number> {
  return retryingTakenPorts(() => embeddedIdleRssOnce(settleMs))
}

async function embeddedIdleRssOnce(settleMs: number): Promise<number> {
  const [core, gateway, admin] = [await freePort(), await freePort(), await freePort()]
  const dataDir = mkdtempSync(join(tmpdir(), 'kigo-bench-embedded-'))
  const app = spawnApp('embedded', [mainJs, 'embedded'], {
    ...cleanEnv(),
    KIGO_GATEWAY_PORT: String(gateway),
    KIGO_CORE_PORT: String(core),
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_ADMIN_PORT: String(admin),
    KIGO_CORE_URL: `http://127.0.0.1:${core}`,
    KIGO_GATEWAY_BIND: '127.0.0.1',
    KIGO_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  })
  try {
    await waitReady(app, `http://127.0.0.1:${gateway}/readyz`, 120_000)
    await new Promise((r) => setTimeout(r, settleMs))
    const rss = rssMiB(app.pid)
    if (rss === null) throw new Error('could not read the embedded process RSS from /proc')
    return rss
  } finally {
    await app.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
