// The production topology the benchmark measures (docs/operations.md#modes, docs/performance.md#how-it-measures): a fresh PostgreSQL
// database, the core and the gateway as separate processes, and the bare reference
// proxy in front of the same core, and the core's anchor; then the gateway alone in
// front of a fixed upstream (docs/performance.md#the-groups-and-their-keys).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { startNginx } from './nginx.js'
import type { RequiredWorkFixture } from './required-work-proxy.js'
import { freePort, spawnApp, waitReady, type AppProcess } from './processes.js'

export const defaultDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/test'
export const defaultRedisUrl = 'redis://127.0.0.1:6379'

const mainJs = fileURLToPath(new URL('../src/main.js', import.meta.url))

/**
 * The Node.js flags the production commands run the apps with (Dockerfile, `npm run
 * start:gateway`, `npm run start:core`): the benchmark measures what is deployed.
 */
export const productionNodeFlags = ['--max-semi-space-size=16', '--heap-growing-percent=50', '--no-allocation-site-pretenuring']
const bareProxyJs = fileURLToPath(new URL('./bare-proxy.js', import.meta.url))
const fixedUpstreamJs = fileURLToPath(new URL('./fixed-upstream.js', import.meta.url))
const undiciProxyJs = fileURLToPath(new URL('./undici-proxy.js', import.meta.url))
const anchorJs = fileURLToPath(new URL('./anchor.js', import.meta.url))
const requiredWorkProxyJs = fileURLToPath(new URL('./required-work-proxy.js', import.meta.url))

export interface Topology {
  core: AppProcess
  gateway: AppProcess
  bare: AppProcess
  /** The core's anchor (anchor.ts) on the same database, with the core's pool size. */
  anchor: AppProcess
  /** The same with the checks the core cannot skip (ANCHOR_REQUIRED=1): the floor under the core's figure. */
  anchorRequired: AppProcess
  ports: { core: number; gateway: number; admin: number; bare: number; anchor: number; anchorRequired: number }
  /** The environment the core and the gateway run with. */
  env: NodeJS.ProcessEnv
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

export function startTopology(opts: { databaseUrl: string; redisUrl: string }): Promise<Topology> {
  return retryingTakenPorts(() => startTopologyOnce(opts))
}

async function startTopologyOnce(opts: { databaseUrl: string; redisUrl: string }): Promise<Topology> {
  const [core, gateway, admin, bare, anchor, anchorRequired] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()]
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
    const coreApp = spawnApp('core', [...productionNodeFlags, mainJs, 'core'], env)
    started.push(coreApp)
    await waitReady(coreApp, `http://127.0.0.1:${core}/readyz`)
    const gatewayApp = spawnApp('gateway', [...productionNodeFlags, mainJs, 'gateway'], env)
    started.push(gatewayApp)
    const bareApp = spawnApp('bare proxy', [bareProxyJs], {
      ...cleanEnv(),
      BARE_PROXY_PORT: String(bare),
      BARE_PROXY_UPSTREAM: `http://127.0.0.1:${core}`,
      BARE_PROXY_TIMEOUT_MS: '10000',
    })
    started.push(bareApp)
    const anchorApp = spawnApp('anchor', [...productionNodeFlags, anchorJs], { ...env, ANCHOR_PORT: String(anchor) })
    started.push(anchorApp)
    const anchorRequiredApp = spawnApp('anchor (required work)', [...productionNodeFlags, anchorJs], { ...env, ANCHOR_PORT: String(anchorRequired), ANCHOR_REQUIRED: '1' })
    started.push(anchorRequiredApp)
    await waitReady(gatewayApp, `http://127.0.0.1:${gateway}/readyz`)
    await waitReady(bareApp, `http://127.0.0.1:${bare}/readyz`)
    await waitReady(anchorApp, `http://127.0.0.1:${anchor}/readyz`)
    await waitReady(anchorRequiredApp, `http://127.0.0.1:${anchorRequired}/readyz`)
    return {
      core: coreApp,
      gateway: gatewayApp,
      bare: bareApp,
      anchor: anchorApp,
      anchorRequired: anchorRequiredApp,
      ports: { core, gateway, admin, bare, anchor, anchorRequired },
      host,
      adminToken,
      env,
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}

export interface AloneTopology {
  upstream: AppProcess
  undici: AppProcess
  bare: AppProcess
  /** Null when nginx is not installed. */
  nginx: AppProcess | null
  gateway: AppProcess
  /** A second gateway like `gateway` that never serves OpenID Connect: the provider's cost to every later request (scenario `alone_anonymous_no_oidc`). */
  gatewayNoOidc: AppProcess
  /** bench/required-work-proxy.ts: the bare proxy plus only the work authentication requires. */
  required: AppProcess
  ports: { upstream: number; undici: number; bare: number; nginx: number | null; gateway: number; gatewayNoOidc: number; required: number }
  /** The Node binary the Node processes run on. */
  node: string
  stop(): Promise<void>
}

/**
 * A gateway with the production settings whose core is `upstreamUrl`, on `node`; with
 * `profileDir`, V8's CPU profiler on, its profile written there when the process stops.
 */
export async function startAloneGateway(name: string, topology: Topology, upstreamUrl: string, dataDir: string, opts: { node?: string; profileDir?: string } = {}): Promise<{ app: AppProcess; port: number }> {
  const [port, admin] = [await freePort(), await freePort()]
  const profile = opts.profileDir ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${opts.profileDir}`] : []
  const app = spawnApp(
    name,
    [...productionNodeFlags, ...profile, mainJs, 'gateway'],
    { ...topology.env, KIGO_GATEWAY_PORT: String(port), KIGO_ADMIN_PORT: String(admin), KIGO_CORE_URL: upstreamUrl, KIGO_DATA_DIR: dataDir },
    opts.node,
  )
  return { app, port }
}

/**
 * The gateway alone (group `gateway_alone` of docs/performance.md#the-groups-and-their-keys): the fixed upstream, and in front of it the minimal
 * node:http + undici proxy, the bare reply-from proxy, nginx when installed, and a second
 * gateway process with the first one's settings (same identity store and Redis, same
 * domestic host) whose core is the fixed upstream.
 */
export function startAlone(topology: Topology, fixture: RequiredWorkFixture, node: string = process.execPath): Promise<AloneTopology> {
  return retryingTakenPorts(() => startAloneOnce(topology, fixture, node))
}

async function startAloneOnce(topology: Topology, fixture: RequiredWorkFixture, node: string): Promise<AloneTopology> {
  const [upstream, undici, bare, nginx, required] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()]
  const upstreamUrl = `http://127.0.0.1:${upstream}`
  const dir = mkdtempSync(join(tmpdir(), 'kigo-bench-alone-'))
  const started: AppProcess[] = []
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const upstreamApp = spawnApp('fixed upstream', [fixedUpstreamJs], { ...cleanEnv(), FIXED_UPSTREAM_PORT: String(upstream) }, node)
    started.push(upstreamApp)
    await waitReady(upstreamApp, `${upstreamUrl}/readyz`)
    const undiciApp = spawnApp('undici proxy', [undiciProxyJs], { ...cleanEnv(), UNDICI_PROXY_PORT: String(undici), UNDICI_PROXY_UPSTREAM: upstreamUrl }, node)
    started.push(undiciApp)
    const bareApp = spawnApp('bare proxy (alone)', [bareProxyJs], { ...cleanEnv(), BARE_PROXY_PORT: String(bare), BARE_PROXY_UPSTREAM: upstreamUrl, BARE_PROXY_TIMEOUT_MS: '10000' }, node)
    started.push(bareApp)
    const nginxApp = startNginx(nginx, upstreamUrl, join(dir, 'nginx'))
    if (nginxApp) started.push(nginxApp)
    const { app: gatewayApp, port: gateway } = await startAloneGateway('gateway (alone)', topology, upstreamUrl, join(dir, 'data'), { node })
    started.push(gatewayApp)
    const { app: gatewayNoOidcApp, port: gatewayNoOidc } = await startAloneGateway('gateway (alone, no OpenID Connect)', topology, upstreamUrl, join(dir, 'data-no-oidc'), { node })
    started.push(gatewayNoOidcApp)
    const requiredApp = spawnApp('required-work proxy', [...productionNodeFlags, requiredWorkProxyJs], {
      ...cleanEnv(),
      REQUIRED_PROXY_PORT: String(required),
      REQUIRED_PROXY_UPSTREAM: upstreamUrl,
      REQUIRED_PROXY_FIXTURE: JSON.stringify({ user: fixture.user, tokens: fixture.tokens, ...(fixture.bearer ? { bearer: { issuer: fixture.bearer.issuer, keys: fixture.bearer.keys } } : {}) }),
      REDIS_URL: topology.env.REDIS_URL,
      KIGO_SECRET_KEY: topology.env.KIGO_SECRET_KEY,
    }, node)
    started.push(requiredApp)
    await waitReady(undiciApp, `http://127.0.0.1:${undici}/readyz`)
    await waitReady(bareApp, `http://127.0.0.1:${bare}/readyz`)
    if (nginxApp) await waitReady(nginxApp, `http://127.0.0.1:${nginx}/readyz`)
    await waitReady(gatewayApp, `http://127.0.0.1:${gateway}/readyz`)
    await waitReady(gatewayNoOidcApp, `http://127.0.0.1:${gatewayNoOidc}/readyz`)
    await waitReady(requiredApp, `http://127.0.0.1:${required}/readyz`)
    return {
      upstream: upstreamApp,
      undici: undiciApp,
      bare: bareApp,
      nginx: nginxApp,
      gateway: gatewayApp,
      gatewayNoOidc: gatewayNoOidcApp,
      required: requiredApp,
      ports: { upstream, undici, bare, nginx: nginxApp ? nginx : null, gateway, gatewayNoOidc, required },
      node,
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}
