// What tracing costs the gateway (docs/performance.md#tracing): three gateway processes in
// front of one core, on one PostgreSQL database and Redis, identical but for tracing: off
// (no OTEL_* variable), on with every trace sampled, and on with 1 % sampled
// (parentbased_traceidratio 0.01), the last two exporting OTLP/HTTP protobuf to a sink in
// this process that reads and discards what it is sent. OAuth statuses/show at saturation,
// in interleaved slices (each round runs the three in a rotating order), medians per
// variant: requests per second, p50, p99 and the gateway's CPU per request. With
// `--without DIR`, a fourth gateway, `without`, runs the build in DIR (a checkout from
// before tracing, built): what tracing off costs, side by side. The results name that
// build by its commit (or its folder's name), not by its path.
//
//   npm run build && node dist/bench/tracing.js [--quick] [--rounds N] [--slice S] [--connections N] [--without DIR] [--out FILE]
import { createServer } from 'node:http'
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startLoadGenerator } from './load-client.js'
import { buildName, cpuMs, freePort, killAllNow, spawnApp, stopAll, waitReady, type AppProcess } from './processes.js'
import { median } from './report.js'
import { seed } from './seed.js'
import { createBenchDatabase, defaultDatabaseUrl, defaultRedisUrl, productionNodeFlags } from './topology.js'

const mainJs = fileURLToPath(new URL('../src/main.js', import.meta.url))
const log = (line: string) => process.stderr.write(`${line}\n`)

export const variants = ['off', 'sampled_100', 'sampled_1', 'without'] as const
export type Variant = (typeof variants)[number]

/** The tracing variables of each gateway (none: off, and the build without tracing). */
export function tracingEnv(variant: Variant, sinkUrl: string): Record<string, string> {
  if (variant === 'off' || variant === 'without') return {}
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: variant === 'sampled_100' ? '1' : '0.01',
  }
}

interface Window {
  rps: number
  p50Ms: number
  p99Ms: number
  cpuUsPerRequest: number | null
  non2xx: number
}

/** A collector that takes every export and keeps only its count and size. */
async function startSink(): Promise<{ url: string; exports: () => { requests: number; bytes: number }; close(): Promise<void> }> {
  let requests = 0
  let bytes = 0
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length))
    req.on('end', () => {
      requests++
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return { url: `http://127.0.0.1:${port}`, exports: () => ({ requests, bytes }), close: () => new Promise((r) => server.close(() => r())) }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean' }, rounds: { type: 'string' }, slice: { type: 'string' }, connections: { type: 'string' }, without: { type: 'string' }, out: { type: 'string' } },
  })
  const withoutJs = values.without === undefined ? null : join(values.without, 'dist', 'src', 'main.js')
  const running = variants.filter((v) => v !== 'without' || withoutJs !== null)
  const quick = values.quick === true
  const rounds = Number(values.rounds ?? (quick ? 1 : 5))
  const slice = Number(values.slice ?? (quick ? 3 : 10))
  const connections = Number(values.connections ?? 32)
  const database = await createBenchDatabase(process.env.BENCH_DATABASE_URL ?? defaultDatabaseUrl)
  const sink = await startSink()
  const dir = mkdtempSync(join(tmpdir(), 'kigo-bench-tracing-'))
  const loader = startLoadGenerator()
  const gateways = new Map<Variant, { process: AppProcess; port: number }>()
  try {
    const [core, admin] = [await freePort(), await freePort()]
    const ports = { off: await freePort(), sampled_100: await freePort(), sampled_1: await freePort(), without: await freePort() }
    const host = `localhost:${ports.off}`
    const adminToken = randomBytes(24).toString('base64url')
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      REDIS_URL: process.env.BENCH_REDIS_URL ?? defaultRedisUrl,
      KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
      KIGO_ADMIN_TOKEN: adminToken,
      KIGO_CORE_PORT: String(core),
      KIGO_CORE_METRICS_PORT: '0',
      KIGO_CORE_URL: `http://127.0.0.1:${core}`,
      KIGO_DOMESTIC_HOST: host,
      KIGO_GATEWAY_BIND: '127.0.0.1',
      KIGO_DATA_DIR: dir,
      LOG_LEVEL: 'warn',
    }
    const coreApp = spawnApp('core', [...productionNodeFlags, mainJs, 'core'], env)
    await waitReady(coreApp, `http://127.0.0.1:${core}/readyz`)
    for (const [i, variant] of running.entries()) {
      // Only the first gateway's operator port is used (seeding); the others get their own.
      const gatewayEnv = { ...env, ...tracingEnv(variant, sink.url), KIGO_GATEWAY_PORT: String(ports[variant]), KIGO_ADMIN_PORT: String(i === 0 ? admin : await freePort()) }
      const p = spawnApp(`gateway (${variant})`, [...productionNodeFlags, variant === 'without' ? withoutJs! : mainJs, 'gateway'], gatewayEnv)
      gateways.set(variant, { process: p, port: ports[variant] })
    }
    for (const [variant, g] of gateways) await waitReady(g.process, `http://127.0.0.1:${g.port}/readyz`).catch((err: Error) => Promise.reject(new Error(`${variant}: ${err.message}`)))
    log('seeding')
    const fixture = await seed({ adminUrl: `http://127.0.0.1:${admin}`, adminToken, gatewayUrl: `http://127.0.0.1:${ports.off}`, host, entries: quick ? 200 : 2000, tokens: 16 })

    const windows = new Map<Variant, Window[]>(running.map((v) => [v, []]))
    const run = async (variant: Variant, seconds: number): Promise<Window> => {
      const g = gateways.get(variant)!
      const before = cpuMs(g.process.pid)
      const r = await loader.run({ url: `http://127.0.0.1:${g.port}`, kind: 'oauth', fixture, durationSeconds: seconds, connections, prebuild: Math.min(400_000, seconds * 8000) })
      const after = cpuMs(g.process.pid)
      const cpuUsPerRequest = before !== null && after !== null && r.responses > 0 ? ((after - before) * 1000) / r.responses : null
      return { rps: r.rps, p50Ms: r.p50Ms, p99Ms: r.p99Ms, cpuUsPerRequest, non2xx: r.non2xx + r.errors + r.timeouts }
    }
    log('warm-up')
    for (const v of running) await run(v, Math.min(slice, 3))
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < running.length; i++) {
        const v = running[(i + round) % running.length]!
        const w = await run(v, slice)
        windows.get(v)!.push(w)
        log(`round ${round + 1}/${rounds} ${v}: ${w.rps.toFixed(0)} req/s, p50 ${w.p50Ms.toFixed(2)} ms, p99 ${w.p99Ms.toFixed(2)} ms, ${w.cpuUsPerRequest?.toFixed(0) ?? '?'} µs CPU/request${w.non2xx ? `, ${w.non2xx} failed` : ''}`)
      }
    }
    const summary = Object.fromEntries(running.map((v) => {
      const ws = windows.get(v)!
      const m = (f: (w: Window) => number | null) => median(ws.map(f).filter((x): x is number => x !== null))
      return [v, { rps: m((w) => w.rps), p50Ms: m((w) => w.p50Ms), p99Ms: m((w) => w.p99Ms), cpuUsPerRequest: m((w) => w.cpuUsPerRequest), failed: ws.reduce((a, w) => a + w.non2xx, 0), windows: ws }]
    })) as Partial<Record<Variant, { rps: number; p50Ms: number; p99Ms: number; cpuUsPerRequest: number; failed: number; windows: Window[] }>>
    const off = summary.off!
    const result = {
      kind: 'tracing',
      at: new Date().toISOString(),
      quick,
      rounds,
      sliceSeconds: slice,
      connections,
      scenario: 'OAuth statuses/show through the gateway to the core',
      sink: sink.exports(),
      variants: summary,
      ...(values.without === undefined ? {} : { without: buildName(values.without) }),
      ratios: Object.fromEntries(running.map((v) => [v, { rps: summary[v]!.rps / off.rps, cpuUsPerRequest: summary[v]!.cpuUsPerRequest / off.cpuUsPerRequest }])),
    }
    console.log('variant        req/s    p50 ms   p99 ms   µs CPU/req   req/s vs off')
    for (const v of running) {
      const s = summary[v]!
      console.log(`${v.padEnd(12)} ${s.rps.toFixed(0).padStart(7)} ${s.p50Ms.toFixed(2).padStart(9)} ${s.p99Ms.toFixed(2).padStart(8)} ${s.cpuUsPerRequest.toFixed(0).padStart(12)} ${(s.rps / off.rps).toFixed(3).padStart(14)}`)
    }
    console.log(`sink: ${result.sink.requests} exports, ${result.sink.bytes} bytes`)
    if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`)
    const failed = running.reduce((a, v) => a + summary[v]!.failed, 0)
    if (failed > 0 || result.sink.requests === 0) process.exitCode = 1
  } finally {
    loader.stop()
    await stopAll()
    await sink.close()
    await database.drop().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}

process.on('SIGINT', () => {
  killAllNow()
  process.exit(130)
})

void main().catch((err: Error) => {
  killAllNow()
  log(err.stack ?? err.message)
  process.exit(1)
})
