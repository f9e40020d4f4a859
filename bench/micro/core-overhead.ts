// Microbenchmark: the core's CPU per request on statuses/show against its anchor
// (bench/anchor.ts), both in this process, through `inject` (no sockets): what the core's
// own request handling costs beyond the least a Fastify service answering the same query
// does. Rounds alternate between the apps so that the machine's drift hits both alike.
//
// `DATABASE_URL=postgres://127.0.0.1:5432/test node dist/bench/micro/core-overhead.js`
// Environment: N requests per round (default 4000), R rounds (default 7), C concurrent
// requests (default 16), CASES (default `anchor,floor,floorident,anon,ident`: a subset, such as one case
// alone under --cpu-prof), BASE (the dist/ directory of another build, such as the
// commit before a change: its core runs too, as `base anon` and `base ident`, interleaved
// with this build's, so that a change is measured within one run), STUB=1 (the cores
// answer from a content store in memory holding the seeded entry: no database round trip,
// so only the core's own work is measured, with less noise; compare core with base).
// Prints CPU µs per request (median of the rounds): anchor, core anonymous, core with a
// signed identity, and the differences.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../src/common/config.js'
import { identityKey, signIdentity, type Identity } from '../../src/common/identity.js'
import { buildCoreApp } from '../../src/core/app.js'
import { createCoreMetrics } from '../../src/core/metrics.js'
import { startCore } from '../../src/core/server.js'
import type { ContentStore } from '../../src/core/store/index.js'
import { openContentStore } from '../../src/core/store/index.js'
import { buildAnchor } from '../anchor.js'
import { median } from '../report.js'
import { fromBuild } from './builds.js'

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error('core-overhead: DATABASE_URL is required')
  process.exit(1)
}
const N = Number(process.env.N ?? 4000)
const R = Number(process.env.R ?? 7)
const C = Number(process.env.C ?? 16)
const chosen = (process.env.CASES ?? 'anchor,floor,floorident,anon,ident').split(',')

const host = 'localhost:8080'
const dataDir = mkdtempSync(join(tmpdir(), 'kigo-core-overhead-'))
const config = loadConfig({
  env: {
    DATABASE_URL: databaseUrl,
    KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
    KIGO_ADMIN_TOKEN: 'x'.repeat(32),
    KIGO_CORE_PORT: '0',
    KIGO_CORE_METRICS_PORT: '0',
    KIGO_DOMESTIC_HOST: host,
    KIGO_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  },
})

// One entry to show, written through the core's own store.
const seeding = await openContentStore({ databaseUrl, dataDir })
const entry = await seeding.createEntry(
  { authorId: 'bench', authorName: 'Bench', keyword: 'bench', source: 'web', deployment: 'domestic', inReplyToStatusId: null },
  [],
  () => 'hello from the core-overhead benchmark',
)
await seeding.upsertUser({ id: 'bench', name: 'Bench' })
await seeding.close()

type CoreModules = { startCore: typeof startCore; buildCoreApp: typeof buildCoreApp; createCoreMetrics: typeof createCoreMetrics }
async function modulesOf(dist: string): Promise<CoreModules> {
  const load = (path: string) => fromBuild<Partial<CoreModules>>(dist, path)
  return { ...(await load('src/core/server.js')), ...(await load('src/core/app.js')), ...(await load('src/core/metrics.js')) } as CoreModules
}

/** The store a STUB run answers from: the seeded entry, and its author's profile. */
const stubStore = new Proxy({} as ContentStore, {
  get(_target, name) {
    if (name === 'getEntryFor') return async (id: string) => (id === entry.id ? { entry, favorited: false } : null)
    if (name === 'getEntry') return async (id: string) => (id === entry.id ? entry : null)
    if (name === 'getUser') return async () => ({ id: 'bench', name: 'Bench' })
    if (name === 'close' || name === 'ping') return async () => undefined
    return undefined
  },
})

async function startOne(m: CoreModules): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  if (!process.env.STUB) return m.startCore(config, { logger: false })
  const app = m.buildCoreApp({ config, store: stubStore, logger: false, metrics: m.createCoreMetrics({ processMetrics: false }) })
  await app.ready()
  return { app, close: () => app.close() }
}

const core = await startOne({ startCore, buildCoreApp, createCoreMetrics })
const base = process.env.BASE ? await startOne(await modulesOf(process.env.BASE)) : undefined
const hosts = { domesticHost: config.domesticHost, globalHost: config.globalHost, publicScheme: config.publicScheme }
const anchor = buildAnchor({ databaseUrl, hosts })
await anchor.ready()
// The floor (bench/anchor.ts with `required`): the checks the core cannot skip.
const floor = buildAnchor({
  databaseUrl,
  hosts,
  required: { secretKey: config.secretKey, identityMaxAgeSeconds: config.core.identityMaxAgeSeconds, routeMethods: config.auth.routeMethods },
})
await floor.ready()

const url = `/api/statuses/show/${entry.id}.json`
const key = identityKey(config.secretKey)
const identity: Identity = { user: 'bench', userName: 'Bench', authMethod: 'basic', consumer: '', scopes: [] }

/** The headers the gateway forwards (src/gateway/proxy/forward.ts), anonymous or signed. */
function headers(signed: boolean): Record<string, string> {
  const requestId = randomUUID()
  const base: Record<string, string> = {
    host,
    'user-agent': 'bench',
    accept: '*/*',
    'x-forwarded-for': '127.0.0.1',
    'x-forwarded-proto': 'http',
    'x-forwarded-host': host,
  }
  if (!signed) return { ...base, 'x-kigo-request-id': requestId }
  return { ...base, ...signIdentity(key, { method: 'GET', url, host, requestId, operation: 'statuses/show', bodySha256: '' }, identity) }
}

let expected: string | undefined
async function round(app: FastifyInstance, signed: boolean, n: number): Promise<number> {
  // Made before the clock starts: the gateway's signing is not the core's cost. Anonymous
  // requests take a few header sets in turn (thousands kept for the round would be the
  // garbage collector's work, not the core's); signed ones one each, since the core runs a
  // signed request once only.
  const sent = Array.from({ length: signed ? n : 64 }, () => headers(signed))
  let i = 0
  const worker = async () => {
    while (i < n) {
      const res = await app.inject({ method: 'GET', url, headers: sent[i++ % sent.length]! })
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
      if (res.body !== (expected ??= res.body)) throw new Error(`bodies differ: ${res.body} vs ${expected}`)
      // With STUB, nothing waits on I/O: without a turn of the event loop now and then, the
      // work that Node's streams leave to setImmediate piles up (about 10 KB per request)
      // and the garbage collector's growing cost, not the core's, filled the later rounds.
      if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const c0 = process.cpuUsage()
  await Promise.all(Array.from({ length: C }, worker))
  const c = process.cpuUsage(c0)
  if (process.env.SPLIT) console.log(`  user ${(c.user / n).toFixed(1)} system ${(c.system / n).toFixed(1)}`)
  return (c.user + c.system) / n
}

const cases = [
  { key: 'anchor', name: 'anchor', app: anchor, signed: false },
  { key: 'floor', name: 'floor anon', app: floor, signed: false },
  { key: 'floorident', name: 'floor ident', app: floor, signed: true },
  { key: 'anon', name: 'core anon', app: core.app, signed: false },
  { key: 'ident', name: 'core ident', app: core.app, signed: true },
  ...(base
    ? [
        { key: 'anon', name: 'base anon', app: base.app, signed: false },
        { key: 'ident', name: 'base ident', app: base.app, signed: true },
      ]
    : []),
].filter((c) => chosen.includes(c.key))
// Warm-up: compiled code and prepared statements on every path before measuring.
for (const c of cases) await round(c.app, c.signed, Math.min(N, 2000))
const results = new Map<string, number[]>(cases.map((c) => [c.name, []]))
for (let r = 0; r < R; r++) for (const c of cases) results.get(c.name)!.push(await round(c.app, c.signed, N))

const med = new Map([...results].map(([name, values]) => [name, median(values)]))
for (const [name, values] of results) console.log(`${name.padEnd(10)} µs/req ${values.map((v) => v.toFixed(1)).join(' ')}  median ${med.get(name)!.toFixed(1)}`)
// Differences round by round (the two sides of each ran next to each other), then their median.
const pairedDiff = (x: string, y: string) => {
  const xs = results.get(x)
  const ys = results.get(y)
  return xs && ys ? median(xs.map((v, i) => v - ys[i]!)) : undefined
}
for (const [x, y] of [
  ['core anon', 'anchor'],
  ['core ident', 'anchor'],
  ['floor anon', 'anchor'],
  ['core anon', 'floor anon'],
  ['core ident', 'floor ident'],
  ['base anon', 'anchor'],
  ['base ident', 'anchor'],
  ['core anon', 'base anon'],
  ['core ident', 'base ident'],
] as const) {
  const d = pairedDiff(x, y)
  if (d !== undefined) console.log(`${x} − ${y}: ${d.toFixed(1)} µs/req (ratio of medians ${(med.get(y)! / med.get(x)!).toFixed(3)})`)
}
if (med.has('core anon') && med.has('core ident')) console.log(`core ident/anon rate: ${(med.get('core anon')! / med.get('core ident')!).toFixed(3)}`)
if (med.has('base anon') && med.has('base ident')) console.log(`base ident/anon rate: ${(med.get('base anon')! / med.get('base ident')!).toFixed(3)}`)

await base?.close()
await core.close()
await anchor.close()
await floor.close()
rmSync(dataDir, { recursive: true, force: true })
