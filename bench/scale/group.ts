// The `scale` group of `npm run bench -- --only scale` (docs/performance.md#scale): for each
// size, a store seeded from SQL (seed.ts) in a database of its own and a core alone on it,
// all sizes at once; then a list of measurements over those stores. Each measurement
// returns part of the `scale` object of the results file; the first, operationLatencies,
// times every operation of operations.ts at a fixed rate, the sizes side by side (slices
// taken in turn), so that a growth ratio's two sides meet the same machine. The statements
// of the largest size are EXPLAINed to bench/results/scale-explain-<date>.txt. Not part of
// the default run: seeding L alone takes several minutes.
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { Pool } from 'undici'
import { openDb, type Db } from '../../src/common/sql.js'
import { migrations } from '../../src/core/store/migrations.js'
import { SqlContentStore } from '../../src/core/store/sql-content-store.js'
import { runPaced } from '../paced-load.js'
import { freePort, killAllNow, spawnApp, stopAll, waitReady, type AppProcess } from '../processes.js'
import type { Settings } from '../settings.js'
import { productionNodeFlags } from '../topology.js'
import { scaleOperations, type ScaleOperation, type Windows } from './operations.js'
import { scaleSeedVersion, scaleSizes, seedScale, type ScaleFixture, type ScaleSize } from './seed.js'
import { scaleConnections } from '../scale-connections.js'
import { scaleReplay } from '../scale-replay.js'

const mainJs = fileURLToPath(new URL('../../src/main.js', import.meta.url))
const root = fileURLToPath(new URL('../../../', import.meta.url))

export type Engine = 'postgres' | 'embedded'

/** What a measurement of one size gets: the seeded store and the core serving it. */
export interface ScaleContext {
  size: ScaleSize
  fixture: ScaleFixture
  engine: Engine
  /** The store's PostgreSQL URL; null on the embedded engine. */
  databaseUrl: string | null
  core: { url: string; host: string; secretKey: string; process: AppProcess }
  settings: ScaleSettings
  log: (line: string) => void
}

/** One measurement over the stores of one engine (every size at once): what it adds to the results' `scale` object (merged key by key). */
export interface ScaleMeasurement {
  name: string
  engines: Engine[]
  run(ctxs: ScaleContext[]): Promise<Record<string, unknown>>
}

export interface ScaleSettings {
  sizes: Array<ScaleSize['name']>
  /** Keep the seeded databases, and reuse those seeded at this seed and schema version. */
  keep: boolean
  /** The embedded engine is measured at these sizes too. */
  embeddedSizes: Array<ScaleSize['name']>
  rate: number
  seconds: number
  warmupSeconds: number
  connections: number
  baseDatabaseUrl: string
  /** Only these operations are timed; null for all. */
  ops: string[] | null
}

export const scaleDefaults = { rate: 200, seconds: 8, warmupSeconds: 2, connections: 16, embeddedSizes: ['M'] as Array<ScaleSize['name']> }

/** The verdicts' bounds (docs/performance.md#scale). */
export const scaleBounds = { growth: 1.5, p99AtLargestMs: 50 }

const windows: Windows = (() => {
  const core = (JSON.parse(readFileSync(join(root, 'config', 'default.json'), 'utf8')) as { core: Windows }).core
  return { hotEntriesHours: core.hotEntriesHours, hotKeywordsHours: core.hotKeywordsHours }
})()

const quantile = (sorted: Float64Array, q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!)
const ms = (v: number) => Math.round(v * 100) / 100

/** Slices each operation's time is cut into at each size, taken in turn across the sizes (2 s each by default). */
const slicesPerOperation = 10

/**
 * Every operation at the fixed rate, one after the other: p50 and p99 of each at each size.
 * An operation's time at each size is cut into slices taken in turn (S, M, L, S, M, L, …),
 * each size's first after a warm-up, so that all sizes of an operation meet the same load
 * on the machine within seconds of each other. The p50 is of all answers; the p99 is the
 * median of the slices' p99s, so a burst of the machine's own (another process, the host)
 * that falls on one slice of one size does not decide a growth ratio; `p99_all_ms` is the
 * p99 of all answers.
 */
export const operationLatencies: ScaleMeasurement = {
  name: 'operations',
  engines: ['postgres', 'embedded'],
  async run(ctxs) {
    const engine = ctxs[0]!.engine
    const { settings, log } = ctxs[0]!
    const figures: Record<string, Record<string, { p50_ms: number; p99_ms: number; p99_all_ms: number; p99_slices_ms: number[] }>> = Object.fromEntries(ctxs.map((c) => [c.size.name, {}]))
    const failures: string[] = []
    const wanted = settings.ops
    const opsOf = ctxs.map((c) => scaleOperations(c.fixture, c.core.host, c.core.secretKey, windows).filter((op) => wanted === null || wanted.includes(op.name)))
    if (opsOf[0]!.length === 0) throw new Error(`--scale-ops: none of ${JSON.stringify(wanted)} is an operation of the scale group`)
    for (let i = 0; i < opsOf[0]!.length; i++) {
      const name = opsOf[0]![i]!.name
      const latencies = ctxs.map(() => [] as Float64Array[])
      // Each size's connections stay open from its first slice (and its warm-up) to its
      // last, as a gateway keeps its own to the core: a slice that opened its own would
      // count the opening (the first answers on fresh connections come late, and the 5th
      // slowest of a slice's 400 answers is its p99).
      const pools = ctxs.map((ctx) => new Pool(ctx.core.url, { connections: settings.connections, pipelining: 1, keepAliveTimeout: 60_000 }))
      try {
        for (let slice = 0; slice < slicesPerOperation; slice++) {
          for (const [k, ctx] of ctxs.entries()) {
            const op = opsOf[k]![i]!
            const r = await runPaced({ url: ctx.core.url, rate: settings.rate, durationSeconds: settings.seconds / slicesPerOperation, warmupSeconds: slice === 0 ? settings.warmupSeconds : 0, connections: settings.connections, pool: pools[k]!, take: op.request })
            latencies[k]!.push(r.latencies)
            const odd = Object.entries(r.statusCodes).filter(([c]) => !c.startsWith('2'))
            if (odd.length || r.errors) failures.push(`${ctx.size.name} ${name}: ${JSON.stringify(Object.fromEntries(odd))} errors ${r.errors}`)
            if (ctx.core.process.exited()) throw new Error(`the core at ${ctx.size.name} exited during ${name}:\n${ctx.core.process.output()}`)
          }
        }
      } finally {
        await Promise.all(pools.map((p) => p.close()))
      }
      const line: string[] = []
      for (const [k, ctx] of ctxs.entries()) {
        const slices = latencies[k]!
        const all = new Float64Array(slices.reduce((n, a) => n + a.length, 0))
        let at = 0
        for (const a of slices) all.set(a, (at += a.length) - a.length)
        all.sort()
        const inTurn = slices.map((a) => quantile(Float64Array.from(a).sort(), 0.99))
        const sliceP99s = Float64Array.from(inTurn).sort()
        const f = { p50_ms: ms(quantile(all, 0.5)), p99_ms: ms(quantile(sliceP99s, 0.5)), p99_all_ms: ms(quantile(all, 0.99)), p99_slices_ms: inTurn.map(ms) }
        figures[ctx.size.name]![name] = f
        line.push(`${ctx.size.name} ${f.p50_ms.toFixed(2).padStart(6)} / ${f.p99_ms.toFixed(2).padStart(6)} (${f.p99_all_ms.toFixed(2)})`)
      }
      log(`    ${name.padEnd(22)} p50 / p99 (p99 of all) ms  ${line.join('   ')}`)
    }
    if (failures.length) throw new Error(`scale ${engine}: requests failed: ${failures.join('; ')}`)
    return { [engine === 'postgres' ? 'sizes' : 'embedded']: figures }
  },
}

/** The measurements of each size, in order. */
export const scaleMeasurements: ScaleMeasurement[] = [operationLatencies]

const schemaVersion = Math.max(...migrations.map((m) => m.version))

async function adminQuery(baseUrl: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 5000 })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

/** The size's own database, kigo_scale_<size>, empty or seeded; a kept one at another version is dropped first. */
async function scaleDatabase(s: ScaleSettings, size: ScaleSize, log: (line: string) => void): Promise<string> {
  const name = `kigo_scale_${size.name.toLowerCase()}`
  const url = new URL(s.baseDatabaseUrl)
  url.pathname = `/${name}`
  let reuse = false
  if (s.keep) {
    const c = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5000 })
    try {
      await c.connect()
      const meta = await c.query<{ fixture: ScaleFixture; schema: number }>(
        `SELECT fixture, (SELECT max(version) FROM kigo_core.schema_migrations) AS schema FROM kigo_core.scale_seed`,
      )
      const row = meta.rows[0]
      reuse = row !== undefined && row.fixture.seedVersion === scaleSeedVersion && row.fixture.size.name === size.name && Number(row.schema) === schemaVersion
      if (!reuse) log(`  ${name}: seeded at another version; seeding it again`)
    } catch {
      // No such database, or not seeded to the end.
    } finally {
      await c.end().catch(() => undefined)
    }
  }
  if (!reuse) {
    await adminQuery(s.baseDatabaseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await adminQuery(s.baseDatabaseUrl, `CREATE DATABASE ${name}`)
  }
  return url.toString()
}

async function dropScaleDatabase(s: ScaleSettings, size: ScaleSize): Promise<void> {
  await adminQuery(s.baseDatabaseUrl, `DROP DATABASE IF EXISTS kigo_scale_${size.name.toLowerCase()} WITH (FORCE)`)
}

/** The core alone on the store (the gateway's cost does not grow with the store, so it is left out). */
async function startCore(store: { databaseUrl: string } | { dataDir: string }): Promise<ScaleContext['core'] & { stop(): Promise<void> }> {
  const port = await freePort()
  const host = `localhost:${await freePort()}`
  const secretKey = randomBytes(32).toString('base64')
  const scratch = mkdtempSync(join(tmpdir(), 'kigo-scale-core-'))
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('KIGO_') && k !== 'DATABASE_URL' && k !== 'REDIS_URL' && k !== 'LOG_LEVEL') env[k] = v
  Object.assign(env, {
    ...('databaseUrl' in store ? { DATABASE_URL: store.databaseUrl, KIGO_DATA_DIR: scratch } : { KIGO_DATA_DIR: store.dataDir }),
    KIGO_SECRET_KEY: secretKey,
    KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    KIGO_CORE_PORT: String(port),
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_DOMESTIC_HOST: host,
    LOG_LEVEL: 'warn',
  })
  const app = spawnApp('core (scale)', [...productionNodeFlags, mainJs, 'core'], env)
  try {
    await waitReady(app, `http://127.0.0.1:${port}/readyz`, 600_000)
  } catch (err) {
    await app.stop()
    throw err
  }
  return {
    url: `http://127.0.0.1:${port}`,
    host,
    secretKey,
    process: app,
    async stop() {
      await app.stop()
      rmSync(scratch, { recursive: true, force: true })
    },
  }
}

/** A Db that keeps every statement sent through it. */
function recording(db: Db): { db: Db; log: Array<{ sql: string; params: unknown[] }> } {
  const log: Array<{ sql: string; params: unknown[] }> = []
  const wrapped: Db = Object.create(db) as Db
  wrapped.query = async <T>(sql: string, params: unknown[] = []) => {
    log.push({ sql, params })
    return db.query<T>(sql, params)
  }
  return { db: wrapped, log }
}

/** What EXPLAIN tells of each operation's statements at one size. */
export interface Explained {
  /** EXPLAIN (ANALYZE, BUFFERS) of every statement, as text. */
  text: string
  /** Pages each operation's statements touch together, by operation (pagesTouched). */
  pages: Record<string, number>
}

/**
 * The 8 KiB pages a statement's plan touched, from its EXPLAIN (ANALYZE, BUFFERS, FORMAT
 * JSON): the shared buffers found in the cache or read in, and temporary pages read or
 * written (the top node counts its children's). The count is the work the store does for
 * the statement, whatever else the machine does while it runs.
 */
export function pagesTouched(plan: { Plan: Record<string, unknown> }): number {
  const n = (key: string) => Number(plan.Plan[key] ?? 0)
  return n('Shared Hit Blocks') + n('Shared Read Blocks') + n('Temp Read Blocks') + n('Temp Written Blocks')
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement each operation's store call sends, run
 * three times: the first warms the cache, the second is shown, the third (FORMAT JSON)
 * counts its pages.
 */
export async function explainOperations(databaseUrl: string, ops: ScaleOperation[]): Promise<Explained> {
  const db = await openDb({ databaseUrl, dataDir: '', maxConnections: 2 })
  const out: string[] = []
  const pages: Record<string, number> = {}
  try {
    const r = recording(db)
    const store = new SqlContentStore(r.db)
    for (const op of ops) {
      r.log.length = 0
      await op.store(store)
      const statements = [...r.log]
      let touched = 0
      for (const st of statements) {
        await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${st.sql}`, st.params)
        const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${st.sql}`, st.params)
        out.push(`=== ${op.name}\n${st.sql.replace(/\s+/g, ' ')}\nparameters: ${JSON.stringify(st.params)}\n${plan.map((p) => p['QUERY PLAN']).join('\n')}\n`)
        const counted = await db.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${st.sql}`, st.params)
        touched += pagesTouched(counted[0]!['QUERY PLAN'][0]!)
      }
      pages[op.name] = touched
    }
  } finally {
    await db.close()
  }
  return { text: out.join('\n'), pages }
}

function merge(into: Record<string, unknown>, part: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(part)) {
    const there = into[k]
    if (there && typeof there === 'object' && v && typeof v === 'object' && !Array.isArray(v)) merge(there as Record<string, unknown>, v as Record<string, unknown>)
    else into[k] = v
  }
}

export interface ScaleRun {
  results: Record<string, unknown>
  explainFile: string | null
}

type Core = Awaited<ReturnType<typeof startCore>>

/** Seeds every size, measures them side by side, and (unless kept) drops them; `extra` measurements run after the built-in ones. */
export async function runScale(s: ScaleSettings, log: (line: string) => void, extra: ScaleMeasurement[] = []): Promise<ScaleRun> {
  const measurements = [...scaleMeasurements, ...extra]
  const results: Record<string, unknown> = {
    rate_rps: s.rate,
    seconds: s.seconds,
    sizes: {},
    growth: {},
    pages: {},
    page_growth: {},
    seed_seconds: {},
    embedded: {},
    embedded_seed_seconds: {},
  }
  let explainFile: string | null = null
  const order = (['S', 'M', 'L'] as const).filter((n) => s.sizes.includes(n))
  const largest = order[order.length - 1]
  const cores: Core[] = []
  try {
    const ctxs: ScaleContext[] = []
    for (const name of order) {
      const size = scaleSizes[name]
      log(`scale ${name}: ${size.entries.toLocaleString('en')} entries, ${size.users.toLocaleString('en')} users, ${size.keywords.toLocaleString('en')} keywords (PostgreSQL)`)
      const databaseUrl = await scaleDatabase(s, size, log)
      // keywords/list?word= answers as many keywords at every size as at the smallest.
      const fixture = await seedScale({ databaseUrl }, size, log, ctxs[0]?.fixture.substringMatches)
      merge(results, { seed_seconds: { [name]: fixture.seedSeconds } })
      log(`  seeded in ${fixture.seedSeconds} s; top keyword ${fixture.topKeyword}, rare ${fixture.rareKeyword}, top author ${fixture.topAuthor}, substring ${fixture.substring} (${fixture.substringMatches} keywords)`)
      const explained = await explainOperations(databaseUrl, scaleOperations(fixture, 'localhost', randomBytes(32).toString('base64'), windows))
      merge(results, { pages: { [name]: explained.pages } })
      if (name === largest) {
        explainFile = join(root, 'bench', 'results', `scale-explain-${new Date().toISOString().slice(0, 10)}.txt`)
        mkdirSync(join(root, 'bench', 'results'), { recursive: true })
        writeFileSync(explainFile, `EXPLAIN (ANALYZE, BUFFERS) at ${name} (${size.entries.toLocaleString('en')} entries) of each statement the core sends per operation, run twice, the second shown.\n\n${explained.text}`)
      }
      const core = await startCore({ databaseUrl })
      cores.push(core)
      ctxs.push({ size, fixture, engine: 'postgres', databaseUrl, core, settings: s, log })
    }
    log(`scale ${order.join(', ')} side by side: each operation ${s.seconds} s at ${s.rate} requests/s at each size, in ${slicesPerOperation} slices taken in turn`)
    for (const m of measurements.filter((x) => x.engines.includes('postgres'))) merge(results, await m.run(ctxs))
  } finally {
    await Promise.all(cores.map((c) => c.stop()))
    if (!s.keep) for (const name of order) await dropScaleDatabase(s, scaleSizes[name])
  }
  for (const name of order.filter((n) => s.embeddedSizes.includes(n))) {
    const size = scaleSizes[name]
    log(`scale ${name}: the embedded engine (PGlite)`)
    const dataDir = mkdtempSync(join(tmpdir(), `kigo-scale-${name}-`))
    try {
      const fixture = await seedScale({ dataDir }, size, log)
      merge(results, { embedded_seed_seconds: { [name]: fixture.seedSeconds } })
      const core = await startCore({ dataDir })
      try {
        const ctx: ScaleContext = { size, fixture, engine: 'embedded', databaseUrl: null, core, settings: s, log }
        for (const m of measurements.filter((x) => x.engines.includes('embedded'))) merge(results, await m.run([ctx]))
      } finally {
        await core.stop()
      }
    } catch (err) {
      // The embedded figures are beside the point of the run: a failure is reported, not fatal.
      log(`  the embedded engine at ${name} failed: ${(err as Error).message}`)
      merge(results, { embedded_error: { [name]: (err as Error).message.slice(0, 500) } })
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  const sizes = results.sizes as Record<string, Record<string, { p99_ms: number }>>
  const small = sizes[order[0]!]
  const big = sizes[largest!]
  if (small && big && order.length > 1) {
    for (const op of Object.keys(big)) if (small[op]) (results.growth as Record<string, number>)[op] = Math.round((big[op]!.p99_ms / small[op].p99_ms) * 100) / 100
  }
  const pages = results.pages as Record<string, Record<string, number>>
  const fewest = pages[order[0]!]
  const most = pages[largest!]
  if (fewest && most && order.length > 1) {
    for (const op of Object.keys(most)) if (fewest[op]) (results.page_growth as Record<string, number>)[op] = Math.round((most[op]! / fewest[op]) * 100) / 100
  }
  await stopAll()
  return { results, explainFile }
}

/** The printed table: each operation's p99 at each size, its growth and its verdicts. */
export function scaleTable(results: Record<string, unknown>): string {
  const sizes = results.sizes as Record<string, Record<string, { p50_ms: number; p99_ms: number }>>
  const embedded = results.embedded as Record<string, Record<string, { p50_ms: number; p99_ms: number }>>
  const growth = results.growth as Record<string, number>
  const pages = (results.pages ?? {}) as Record<string, Record<string, number>>
  const pageGrowth = (results.page_growth ?? {}) as Record<string, number>
  const names = Object.keys(sizes)
  const largest = names[names.length - 1]
  const ops = largest ? Object.keys(sizes[largest]!) : []
  const head = `| operation | ${names.map((n) => `${n} p50 / p99 ms`).join(' | ')} | growth (p99 ${largest} / ${names[0]}) | pages ${names.join(' / ')} (growth) | ${Object.keys(embedded).map((n) => `embedded ${n} p50 / p99 ms | `).join('')}verdict |`
  const lines = [head, `|${'---|'.repeat(head.split('|').length - 2)}`]
  for (const op of ops) {
    const g = growth[op]
    const p99 = sizes[largest!]![op]!.p99_ms
    const verdicts = [
      g === undefined ? null : g <= scaleBounds.growth ? 'growth met' : 'growth NOT met',
      largest === 'L' ? (p99 <= scaleBounds.p99AtLargestMs ? 'p99 at L met' : 'p99 at L NOT met') : null,
    ].filter((v) => v !== null)
    lines.push(`| ${op} | ${names.map((n) => (sizes[n]![op] ? `${sizes[n]![op].p50_ms} / ${sizes[n]![op].p99_ms}` : '–')).join(' | ')} | ${g ?? '–'} | ${names.map((n) => pages[n]?.[op] ?? '–').join(' / ')} (${pageGrowth[op] ?? '–'}) | ${Object.keys(embedded).map((n) => `${embedded[n]![op] ? `${embedded[n]![op].p50_ms} / ${embedded[n]![op].p99_ms}` : '–'} | `).join('')}${verdicts.join(', ') || '–'} |`)
  }
  return lines.join('\n')
}

/**
 * `npm run bench -- --only scale`: runs the group, writes the results file (`--out`) and a
 * copy in bench/results/ (scale-<time>.json), and prints the table. The exit status: 0, or
 * 1 when a request failed or the run broke off.
 */
export async function runScaleBench(s: Settings, databaseUrl: string, log: (line: string) => void): Promise<number> {
  // The core started for a size is stopped however the run ends (Ctrl-C included).
  process.once('exit', killAllNow)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)))
  try {
    const { results, explainFile } = await runScale(
      { ...scaleDefaults, sizes: s.scaleSizes, keep: s.keepScaleData, seconds: s.scaleSeconds, baseDatabaseUrl: databaseUrl, ops: s.scaleOps },
      log,
    )
    // Replay-cache memory and idle connections do not depend on the store's size: measured once, after the sizes.
    log('scale: replay-cache memory (3,000,000 nonces in a private Redis)')
    const replay = await scaleReplay()
    log('scale: 10,000 idle keep-alive connections')
    const connections = await scaleConnections()
    const written = `${JSON.stringify({ scale: { ...results, replay, connections }, node: process.version, cpus: cpus().length, load_average: loadavg(), settings: { sizes: s.scaleSizes, seconds: s.scaleSeconds, rate_rps: scaleDefaults.rate, ops: s.scaleOps } }, null, 2)}\n`
    mkdirSync(dirname(s.out), { recursive: true })
    writeFileSync(s.out, written)
    const archive = join(root, 'bench', 'results', `scale-${new Date().toISOString().replace(/\.[0-9]{3}Z$/, 'Z').replaceAll(':', '-')}.json`)
    writeFileSync(archive, written)
    console.log(`\n${scaleTable(results)}\n`)
    console.log(`results written to ${s.out} and ${archive}${explainFile ? `; EXPLAIN in ${explainFile}` : ''}`)
    return 0
  } catch (err) {
    console.error(`benchmark failed: ${(err as Error).message}`)
    return 1
  } finally {
    await stopAll()
  }
}
