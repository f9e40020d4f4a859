// `npm run soak -- --minutes N --out FILE` (docs/operations.md#reliability): production
// mode (one core and two gateways as processes, on a PostgreSQL cluster and a Redis server
// of the harness's own in a temporary directory) under a fixed-rate mix of reads and writes
// (load.ts), with faults on a schedule: kill -9 of each gateway and of the core, then a
// restart; PostgreSQL stopped, and hung with SIGSTOP; Redis stopped, and hung. Afterwards
// every write is accounted for against the store (check.ts). Writes FILE (JSON) and, beside
// it, FILE with .svg: throughput, p99 and every process's RSS per second, faults marked.
// The exit status is 1 when a write was lost, duplicated or half-applied.
//
//   node dist/bench/soak/run.js --minutes N --out FILE [--rate R] [--fault-seconds S] [--users N]
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { percentile } from '../load-worker.js'
import { basicAuthorization } from '../signing.js'
import { descendants, freePort, killAllNow, rssMiB, spawnApp, stopAll, waitReady, type AppProcess } from '../processes.js'
import { productionNodeFlags } from '../topology.js'
import { account, recoveryLimitSeconds, type Accounting } from './check.js'
import { keywords, SoakLoad, type Gateway, type SoakUser } from './load.js'
import { soakSvg, type Second } from './plot.js'
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './services.js'

const mainJs = fileURLToPath(new URL('../../src/main.js', import.meta.url))
const log = (line: string) => process.stderr.write(`${line}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export type FaultTarget = 'gateway-1' | 'gateway-2' | 'core' | 'postgres' | 'redis'
export interface Fault {
  target: FaultTarget
  kind: 'kill -9' | 'stop' | 'hang'
  /** Seconds from the start of the load. */
  at_s: number
  /** How long the target was down or hung. */
  duration_s: number
  /** Seconds from the end of the fault (restart, resume) until every process reported ready again; null if not within the run's recovery limit. */
  recovered_s: number | null
  /** Seconds from that recovery until a 5 s window's p99 was back at its level before the fault; null if never. */
  p99_back_s: number | null
  p99_before_ms: number | null
}

const schedule: Array<Pick<Fault, 'target' | 'kind'>> = [
  { target: 'gateway-1', kind: 'kill -9' },
  { target: 'postgres', kind: 'stop' },
  { target: 'redis', kind: 'hang' },
  { target: 'core', kind: 'kill -9' },
  { target: 'postgres', kind: 'hang' },
  { target: 'redis', kind: 'stop' },
  { target: 'gateway-2', kind: 'kill -9' },
]

/** When each fault starts, evenly spread between a quiet start and a quiet end. */
export function faultTimes(totalSeconds: number): { at: number[]; lasting: number } {
  const warmup = Math.max(15, totalSeconds * 0.1)
  const quiet = Math.max(15, totalSeconds * 0.1)
  const window = totalSeconds - warmup - quiet
  const spacing = Math.max(10, Math.min(120, window / schedule.length))
  const count = Math.max(1, Math.floor(window / spacing))
  const lasting = Math.min(10, spacing * 0.4)
  return { at: Array.from({ length: count }, (_, i) => warmup + i * spacing), lasting }
}

interface Apps {
  procs: Record<'core' | 'gateway-1' | 'gateway-2', AppProcess>
  ports: { core: number; gateways: [number, number]; admin: number }
  restart(name: 'core' | 'gateway-1' | 'gateway-2'): void
  ready(): Promise<boolean>
  /** Seconds from spawning the core until it and both gateways were ready: what a start takes on this machine now. */
  startSeconds: number
}


async function startApps(pg: PrivatePostgres, redis: PrivateRedis, dir: string, adminToken: string): Promise<Apps> {
  const [core, gw1, gw2, admin1, admin2] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()]
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
    KIGO_ADMIN_TOKEN: adminToken,
    KIGO_CORE_PORT: String(core),
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_CORE_URL: `http://127.0.0.1:${core}`,
    KIGO_DOMESTIC_HOST: `localhost:${gw1}`,
    KIGO_GLOBAL_HOST: `127.0.0.1:${gw1}`,
    KIGO_DOMESTIC_HOST_ALIASES: `localhost:${gw2}`,
    KIGO_GLOBAL_HOST_ALIASES: `127.0.0.1:${gw2}`,
    KIGO_GATEWAY_BIND: '127.0.0.1',
    KIGO_DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: 'warn',
  }
  const args = (mode: string) => [...productionNodeFlags, mainJs, mode]
  const envOf = {
    core: env,
    'gateway-1': { ...env, KIGO_GATEWAY_PORT: String(gw1), KIGO_ADMIN_PORT: String(admin1) },
    'gateway-2': { ...env, KIGO_GATEWAY_PORT: String(gw2), KIGO_ADMIN_PORT: String(admin2) },
  }
  const spawnOne = (name: 'core' | 'gateway-1' | 'gateway-2') => spawnApp(name, args(name === 'core' ? 'core' : 'gateway'), envOf[name])
  const spawnedAt = Date.now()
  const procs = { core: spawnOne('core') } as Apps['procs']
  await waitReady(procs.core, `http://127.0.0.1:${core}/readyz`)
  procs['gateway-1'] = spawnOne('gateway-1')
  procs['gateway-2'] = spawnOne('gateway-2')
  await waitReady(procs['gateway-1'], `http://127.0.0.1:${gw1}/readyz`)
  await waitReady(procs['gateway-2'], `http://127.0.0.1:${gw2}/readyz`)
  const startSeconds = (Date.now() - spawnedAt) / 1000
  const probe = async (url: string) => {
    try {
      const res = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 })
      await res.body.dump()
      return res.statusCode === 200
    } catch {
      return false
    }
  }
  return {
    procs,
    ports: { core, gateways: [gw1, gw2], admin: admin1 },
    startSeconds,
    restart(name) {
      procs[name] = spawnOne(name)
    },
    async ready() {
      const r = await Promise.all([probe(`http://127.0.0.1:${core}/readyz`), probe(`http://127.0.0.1:${gw1}/readyz`), probe(`http://127.0.0.1:${gw2}/readyz`)])
      return r.every(Boolean)
    },
  }
}

async function admin<T>(url: string, token: string, path: string, body: unknown): Promise<T> {
  const res = await request(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.body.text()
  if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 200)}`)
  return JSON.parse(text) as T
}

/** Users with an API password and an OAuth token each; each posts once, so that it has a profile in the core. */
async function seedUsers(apps: Apps, adminToken: string, count: number): Promise<SoakUser[]> {
  const adminUrl = `http://127.0.0.1:${apps.ports.admin}`
  const scopes = ['read_public', 'write_public']
  const users: SoakUser[] = []
  for (let i = 1; i <= count; i++) {
    const id = `soaker${i}`
    const u = await admin<{ api_password: string }>(adminUrl, adminToken, '/admin/users', { id })
    const a = await admin<{ consumer_key: string; consumer_secret: string }>(adminUrl, adminToken, '/admin/apps', { name: `soak ${id}`, owner: id, scopes })
    const t = await admin<{ token: string; token_secret: string }>(adminUrl, adminToken, '/admin/tokens', { consumer: a.consumer_key, user: id, scopes })
    users.push({ id, apiPassword: u.api_password, oauth: { consumerKey: a.consumer_key, consumerSecret: a.consumer_secret, token: t.token, tokenSecret: t.token_secret } })
    const host = `localhost:${apps.ports.gateways[0]}`
    const res = await request(`http://127.0.0.1:${apps.ports.gateways[0]}/api/statuses/update.json`, {
      method: 'POST',
      headers: { host, authorization: basicAuthorization(id, u.api_password), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ keyword: keywords[i % keywords.length]!, status: `seed ${id}` }).toString(),
    })
    await res.body.dump()
    if (res.statusCode !== 200) throw new Error(`seeding ${id}: ${res.statusCode}`)
  }
  return users
}

/** The p99 of the samples in [from, to) seconds; null when there are none. */
function p99Between(samples: SoakLoad['samples'], from: number, to: number): number | null {
  const ms = samples.filter((s) => s.at >= from * 1000 && s.at < to * 1000).map((s) => s.ms)
  if (ms.length === 0) return null
  return percentile(Float64Array.from(ms).sort(), 0.99)
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { minutes: { type: 'string' }, out: { type: 'string' }, rate: { type: 'string' }, 'fault-seconds': { type: 'string' }, users: { type: 'string' } },
  })
  const minutes = Number(values.minutes ?? 60)
  const out = values.out ?? 'soak.json'
  const rate = Number(values.rate ?? 40)
  const totalSeconds = Math.round(minutes * 60)
  const plan = faultTimes(totalSeconds)
  const lasting = Number(values['fault-seconds'] ?? plan.lasting)
  const dir = mkdtempSync(join(tmpdir(), 'kigo-soak-'))
  let pg: PrivatePostgres | undefined
  let redis: PrivateRedis | undefined
  const cleanup = async () => {
    await stopAll()
    pg?.close()
    await redis?.close()
    rmSync(dir, { recursive: true, force: true })
  }
  process.on('SIGINT', () => {
    killAllNow()
    pg?.close()
    void redis?.close()
    process.exit(130)
  })
  try {
    log(`soak: ${minutes} min at ${rate} requests/s, ${plan.at.length} faults of ${lasting.toFixed(1)} s`)
    pg = await startPrivatePostgres(dir)
    redis = await startPrivateRedis()
    const adminToken = randomBytes(24).toString('base64url')
    const apps = await startApps(pg, redis, dir, adminToken)
    const users = await seedUsers(apps, adminToken, Number(values.users ?? 8))
    const gateways: Gateway[] = apps.ports.gateways.map((p) => ({ url: `http://127.0.0.1:${p}`, hosts: [`localhost:${p}`, `127.0.0.1:${p}`] as [string, string] }))
    const started = Date.now()
    const load = new SoakLoad({ gateways, users, rate, timeoutSeconds: 15 }, started)
    const elapsed = () => (Date.now() - started) / 1000
    // The start time as the results file records it (to a tenth of a second), so that the
    // limit read back from it is the limit the run used.
    const startSeconds = Math.round(apps.startSeconds * 10) / 10
    const recoveryLimit = recoveryLimitSeconds(startSeconds)
    log(`the apps started in ${startSeconds.toFixed(1)} s: a recovery is waited for up to ${recoveryLimit} s`)

    // RSS of every process, each second.
    const rss: Array<{ t: number; mb: Record<string, number | null> }> = []
    const treeRss = (pid: number | null) => {
      if (pid === null) return null
      let total = 0
      for (const p of [pid, ...descendants(pid)]) total += rssMiB(p) ?? 0
      return total
    }
    const rssTimer = setInterval(() => {
      rss.push({
        t: Math.floor(elapsed()),
        mb: {
          core: rssMiB(apps.procs.core.pid),
          'gateway-1': rssMiB(apps.procs['gateway-1'].pid),
          'gateway-2': rssMiB(apps.procs['gateway-2'].pid),
          postgres: treeRss(pg!.pid()),
          redis: treeRss(redis!.pid()),
        },
      })
    }, 1000)

    load.start()
    const faults: Fault[] = []
    for (const [i, at] of plan.at.entries()) {
      const step = schedule[i % schedule.length]!
      while (elapsed() < at) await sleep(100)
      const at_s = elapsed()
      log(`${at_s.toFixed(0)} s: ${step.target} ${step.kind}`)
      if (step.kind === 'kill -9') {
        const name = step.target as 'core' | 'gateway-1' | 'gateway-2'
        process.kill(apps.procs[name].pid, 'SIGKILL')
        await sleep(lasting * 1000)
        apps.restart(name)
      } else if (step.target === 'postgres') {
        if (step.kind === 'stop') pg.stop()
        else pg.hang()
        await sleep(lasting * 1000)
        if (step.kind === 'stop') pg.start()
        else pg.resume()
      } else {
        if (step.kind === 'stop') await redis.stop()
        else redis.hang()
        await sleep(lasting * 1000)
        if (step.kind === 'stop') redis.start()
        else redis.resume()
      }
      const ended = elapsed()
      let recovered: number | null = null
      while (elapsed() - ended < recoveryLimit) {
        if (await apps.ready()) {
          recovered = elapsed() - ended
          break
        }
        await sleep(200)
      }
      log(`  recovered in ${recovered === null ? `more than ${recoveryLimit}` : recovered.toFixed(1)} s`)
      faults.push({ ...step, at_s: Math.round(at_s * 10) / 10, duration_s: Math.round((ended - at_s) * 10) / 10, recovered_s: recovered === null ? null : Math.round(recovered * 10) / 10, p99_back_s: null, p99_before_ms: null })
    }
    while (elapsed() < totalSeconds) await sleep(200)
    await load.stop()
    clearInterval(rssTimer)
    log('accounting')
    const accounting: Accounting = await account(pg.url, load.writes)

    // Per second: answers, failures, p99, RSS.
    const seconds: Second[] = []
    const bySecond = new Map<number, number[]>()
    const failedBySecond = new Map<number, number>()
    for (const s of load.samples) {
      const t = Math.floor(s.at / 1000)
      if (s.ok) bySecond.set(t, [...(bySecond.get(t) ?? []), s.ms])
      else failedBySecond.set(t, (failedBySecond.get(t) ?? 0) + 1)
    }
    for (let t = 0; t < totalSeconds; t++) {
      const ms = bySecond.get(t) ?? []
      seconds.push({ t, ok: ms.length, failed: failedBySecond.get(t) ?? 0, p99Ms: ms.length ? percentile(Float64Array.from(ms).sort(), 0.99) : null, rssMb: rss.find((r) => r.t === t)?.mb ?? {} })
    }
    // p99 back at its level before the fault: the first 5 s window after recovery whose p99
    // is at most 1.5 times (or 5 ms above) the p99 of the 20 s before the fault.
    for (const f of faults) {
      const before = p99Between(load.samples, Math.max(0, f.at_s - 20), f.at_s)
      f.p99_before_ms = before === null ? null : Math.round(before * 10) / 10
      if (before === null || f.recovered_s === null) continue
      const from = f.at_s + f.duration_s + f.recovered_s
      for (let t = from; t + 5 <= totalSeconds; t += 0.5) {
        const p = p99Between(load.samples, t, t + 5)
        if (p !== null && p <= Math.max(before * 1.5, before + 5)) {
          f.p99_back_s = Math.round((t - from) * 10) / 10
          break
        }
      }
    }
    const processes = ['core', 'gateway-1', 'gateway-2', 'postgres', 'redis']
    const quarter = (q: number, p: string) => {
      const xs = rss.filter((r) => r.t >= (q * totalSeconds) / 4 && r.t < ((q + 1) * totalSeconds) / 4).map((r) => r.mb[p]).filter((v): v is number => typeof v === 'number').sort((a, b) => a - b)
      return xs.length ? xs[Math.floor(xs.length / 2)]! : null
    }
    const rssFigures = Object.fromEntries(processes.map((p) => {
      const second = quarter(1, p)
      const last = quarter(3, p)
      return [p, { second_quarter_mb: second, last_quarter_mb: last, ratio: second && last ? Math.round((last / second) * 1000) / 1000 : null }]
    }))
    const recoveries = faults.map((f) => f.recovered_s).filter((v): v is number => v !== null)
    const result = {
      kind: 'soak',
      at: new Date(started).toISOString(),
      minutes,
      rate,
      topology: 'production: one core, two gateways, a private PostgreSQL cluster and Redis server',
      requests: load.samples.length,
      failed_requests: load.samples.filter((s) => !s.ok).length,
      skipped_requests: load.skipped,
      statuses: load.samples.reduce<Record<string, number>>((counts, s) => ((counts[s.status] = (counts[s.status] ?? 0) + 1), counts), {}),
      ...accounting,
      faults,
      max_recovery_s: recoveries.length === faults.length && recoveries.length ? Math.max(...recoveries) : null,
      // The machine's own pace in this run, to read the recoveries against.
      start_s: startSeconds,
      recovery_limit_s: recoveryLimit,
      max_p99_back_s: faults.every((f) => f.p99_back_s !== null) && faults.length ? Math.max(...faults.map((f) => f.p99_back_s!)) : null,
      p99_ms: p99Between(load.samples, 0, totalSeconds),
      rss: rssFigures,
      rss_flat: Object.values(rssFigures).every((r) => r.ratio === null || Math.abs(r.ratio - 1) <= 0.1),
      plot: out.replace(/\.json$/, '') + '.svg',
    }
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`)
    writeFileSync(result.plot, soakSvg(seconds, faults.map((f) => ({ target: `${f.target} ${f.kind}`, at_s: f.at_s, until_s: f.at_s + f.duration_s })), processes, `kigo soak: ${minutes} min at ${rate} req/s, ${result.acknowledged_writes} acknowledged writes, ${result.lost_writes} lost, ${result.duplicated_writes} duplicated (${result.at})`))
    log(`acknowledged ${result.acknowledged_writes}, lost ${result.lost_writes}, duplicated ${result.duplicated_writes}, half-applied ${result.half_applied_writes}, in doubt ${result.in_doubt_writes}; max recovery ${result.max_recovery_s ?? '?'} s; written ${out} and ${result.plot}`)
    log(`answers by status: ${JSON.stringify(result.statuses)}`)
    for (const e of [...accounting.examples.lost, ...accounting.examples.duplicated, ...accounting.examples.half_applied]) log(`  ${e}`)
    if (result.lost_writes > 0 || result.duplicated_writes > 0 || result.half_applied_writes > 0) process.exitCode = 1
  } finally {
    await cleanup()
  }
}

void main().catch((err: Error) => {
  killAllNow()
  log(err.stack ?? err.message)
  process.exit(1)
})
