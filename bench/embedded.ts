// The embedded footprint (docs/performance.md#the-groups-and-their-keys group `embedded`, docs/operations.md#modes): `npm start` on a data directory that
// already exists, with dist/ up to date, as a user runs it the second time. Measured:
// seconds from spawning `npm start` to the gateway's /readyz answering 200, the node
// process's RSS once idle, and its RSS after 1,000 mixed requests (reads anonymous, with
// Basic, OAuth and WSSE; one in five an OAuth statuses/update).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { commandNames, cpuMs, descendants, freePort, rssMiB, spawnApp, spawnCommand, waitReady, type AppProcess } from './processes.js'
import { requestSource, type PreparedRequest, type RequestKind } from './scenarios.js'
import { seed } from './seed.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const mainJs = fileURLToPath(new URL('../src/main.js', import.meta.url))

export interface EmbeddedFootprint {
  start_s: number
  /** CPU time (all threads) the app process had used when it was first ready. */
  start_cpu_s: number | null
  idle_rss_mb: number
  loaded_rss_mb: number
  /** Requests of the 1,000 that did not answer 2xx. */
  failed: number
}

/** The node process running dist/src/main.js below `npm start`. */
function appPid(npmPid: number): number | null {
  for (const pid of descendants(npmPid)) {
    try {
      // The node process itself, not the shell npm runs the script with.
      if (commandNames(pid).includes('node') && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/src/main.js')) return pid
    } catch {
      // gone meanwhile
    }
  }
  return null
}

async function readyAfter(app: AppProcess, url: string, started: number, timeoutMs: number): Promise<number> {
  while (performance.now() - started < timeoutMs) {
    if (app.exited()) throw new Error(`npm start exited before it was ready:\n${app.output()}`)
    try {
      const res = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 })
      await res.body.dump()
      if (res.statusCode === 200) return (performance.now() - started) / 1000
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`npm start was not ready within ${timeoutMs / 1000} s:\n${app.output()}`)
}

export async function embeddedFootprint(opts: { settleMs: number; requests?: number }): Promise<EmbeddedFootprint> {
  const [core, gateway, admin] = [await freePort(), await freePort(), await freePort()]
  const dataDir = mkdtempSync(join(tmpdir(), 'kigo-bench-embedded-'))
  const adminToken = randomBytes(24).toString('base64url')
  const host = `localhost:${gateway}`
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('KIGO_') && k !== 'DATABASE_URL' && k !== 'REDIS_URL' && k !== 'LOG_LEVEL') env[k] = v
  Object.assign(env, {
    KIGO_GATEWAY_PORT: String(gateway),
    KIGO_CORE_PORT: String(core),
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_ADMIN_PORT: String(admin),
    KIGO_CORE_URL: `http://127.0.0.1:${core}`,
    KIGO_GATEWAY_BIND: '127.0.0.1',
    KIGO_DOMESTIC_HOST: host,
    KIGO_ADMIN_TOKEN: adminToken,
    KIGO_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  })
  const readyz = `http://127.0.0.1:${gateway}/readyz`
  try {
    // First start: the data directory is created and seeded, then the process stops.
    const first = spawnApp('embedded (first start)', [mainJs, 'embedded'], env)
    let fixture
    try {
      await waitReady(first, readyz, 180_000)
      fixture = await seed({ adminUrl: `http://127.0.0.1:${admin}`, adminToken, gatewayUrl: `http://127.0.0.1:${gateway}`, host, entries: 50, tokens: 2, concurrency: 4 })
    } finally {
      await first.stop()
    }

    // The measured start.
    const started = performance.now()
    const npm = spawnCommand('npm start', 'npm', ['start', '--silent'], env, root)
    try {
      const startS = await readyAfter(npm, readyz, started, 180_000)
      const pid = appPid(npm.pid)
      if (pid === null) throw new Error('could not find the node process below npm start')
      // The app's own CPU time up to ready moves far less with the machine's load than the
      // wall-clock start does (npm's own start is not in it).
      const startCpuMs = cpuMs(pid)
      await new Promise((r) => setTimeout(r, opts.settleMs))
      const idle = rssMiB(pid)

      const kinds: RequestKind[] = ['anonymous', 'basic', 'oauth', 'wsse', 'update_oauth']
      const sources = kinds.map((k) => requestSource(k, fixture))
      const total = opts.requests ?? 1000
      let next = 0
      let failed = 0
      const send = async (r: PreparedRequest) => {
        const res = await request(`http://127.0.0.1:${gateway}${r.path}`, { method: r.method, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) })
        await res.body.dump()
        if (res.statusCode < 200 || res.statusCode > 299) failed++
      }
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = next++; i < total; i = next++) await send(sources[i % sources.length]!())
        }),
      )
      const loaded = rssMiB(pid)
      if (idle === null || loaded === null) throw new Error('could not read the embedded process RSS from /proc')
      // npm passes the signal on; the app stops gracefully.
      process.kill(pid, 'SIGTERM')
      return { start_s: Number(startS.toFixed(2)), start_cpu_s: startCpuMs === null ? null : Number((startCpuMs / 1000).toFixed(2)), idle_rss_mb: Number(idle.toFixed(1)), loaded_rss_mb: Number(loaded.toFixed(1)), failed }
    } finally {
      await npm.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}
