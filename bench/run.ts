// `npm run bench` (SPEC §8): starts the production topology on 127.0.0.1, seeds it,
// measures every scenario side by side (interleaved, repeated, medians), then a
// fixed-rate run for the latency the gateway adds, the gateway's memory under load and
// the embedded mode's idle memory. Prints a table with the targets and writes the
// result file. Any 5xx or transport error makes the exit status non-zero.
//
//   node dist/bench/run.js [--quick] [--out FILE] [--rounds N] [--duration S] [--slice S] [--connections N]
//                          [--profile DIR]   (CPU profiles of core and gateway, node --cpu-prof)
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { dirname } from 'node:path'
import { startLoadGenerator, type LoadGenerator } from './load-client.js'
import type { LoadResult } from './load-worker.js'
import { commandCpuDeltaMs, commandCpuMs, cpuMs, killAllNow, machineBusyMs, sampleRss, stopAll, type AppProcess } from './processes.js'
import { formatReport, median, ratios, summarize, targets, type BenchResults, type WindowMeasurement } from './report.js'
import { fixedRateNames, scenarioNames, scenarios, type Fixture, type FixedRateName, type ScenarioName } from './scenarios.js'
import { seed } from './seed.js'
import { passes, settingsFrom } from './settings.js'
import { createBenchDatabase, defaultDatabaseUrl, defaultRedisUrl, embeddedIdleRss, startTopology, type Topology } from './topology.js'

/** Most requests built for one window (memory of the load generator). */
const prebuildCap = 400_000

const log = (line: string) => process.stderr.write(`${line}\n`)

function measurement(result: LoadResult, rssMb: number | null): WindowMeasurement {
  return {
    rps: result.rps,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    rssMb,
    non2xx: result.non2xx,
    status5xx: result.status5xx,
    errors: result.errors + result.timeouts,
  }
}

async function main(): Promise<number> {
  const s = settingsFrom(process.argv.slice(2))
  const databaseUrl = process.env.DATABASE_URL ?? defaultDatabaseUrl
  const redisUrl = process.env.REDIS_URL ?? defaultRedisUrl

  let database: { url: string; drop(): Promise<void> } | undefined
  let topology: Topology | undefined
  let loader: LoadGenerator | undefined
  let cleaning: Promise<void> | undefined
  const cleanup = () =>
    (cleaning ??= (async () => {
      loader?.stop()
      await topology?.stop().catch(() => undefined)
      await stopAll()
      await database?.drop().catch((err: Error) => log(`could not drop the bench database: ${err.message}`))
    })())
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`\n${signal}: stopping everything the benchmark started`)
      void cleanup().finally(() => process.exit(130))
    })
  }
  process.once('exit', killAllNow)

  try {
    log('embedded mode: measuring idle memory')
    const embeddedRss = await embeddedIdleRss(s.embeddedSettleMs)

    database = await createBenchDatabase(databaseUrl)
    log(`production topology: core and gateway processes on PostgreSQL ${new URL(database.url).pathname.slice(1)} and Redis`)
    topology = await startTopology({ databaseUrl: database.url, redisUrl, ...(s.profileDir ? { profileDir: s.profileDir } : {}) })
    const base = (port: number) => `http://127.0.0.1:${port}`
    log(`seeding: user, application, ${s.tokens} tokens, ${s.entries} entries`)
    const fixture: Fixture = await seed({
      adminUrl: base(topology.ports.admin),
      adminToken: topology.adminToken,
      gatewayUrl: base(topology.ports.gateway),
      host: topology.host,
      entries: s.entries,
      tokens: s.tokens,
    })

    loader = startLoadGenerator()
    const t = topology
    const servers: Record<'core' | 'bare' | 'gateway', { url: string; process: AppProcess }> = {
      core: { url: base(t.ports.core), process: t.core },
      bare: { url: base(t.ports.bare), process: t.bare },
      gateway: { url: base(t.ports.gateway), process: t.gateway },
    }
    const window = async (name: ScenarioName | FixedRateName, durationSeconds: number, prebuild: number, overallRate?: number) => {
      const { target, kind } = scenarios[name]
      const server = servers[target]
      let sampler: { stop(): number | null } | undefined
      // CPU time of each process involved (and of the whole machine), read as the load
      // starts and again when it ends.
      const cpuNow = () => ({
        core: cpuMs(servers.core.process.pid),
        front: target === 'core' ? null : cpuMs(server.process.pid),
        servers: commandCpuMs(['postgres', 'redis-server']),
        machine: machineBusyMs(),
      })
      let cpuBefore: ReturnType<typeof cpuNow> | undefined
      const result = await loader!.run(
        { url: server.url, kind, fixture, durationSeconds, connections: s.connections, prebuild, ...(overallRate ? { overallRate } : {}) },
        () => {
          sampler = sampleRss(server.process.pid)
          cpuBefore = cpuNow()
        },
      )
      const rss = sampler?.stop() ?? null
      const cpuAfter = cpuNow()
      const requests = result.rps * durationSeconds
      const perRequest = (usedMs: number | null) => (usedMs === null || requests <= 0 ? null : (usedMs * 1000) / requests)
      const used = (a: number | null, b: number | null | undefined) => (a === null || b === null || b === undefined ? null : a - b)
      const coreCpuUs = perRequest(used(cpuAfter.core, cpuBefore?.core))
      const frontCpuUs = perRequest(used(cpuAfter.front, cpuBefore?.front))
      const dbCpuUs = cpuBefore ? perRequest(commandCpuDeltaMs(cpuBefore.servers.postgres, cpuAfter.servers.postgres)) : null
      const redisCpuUs = cpuBefore ? perRequest(commandCpuDeltaMs(cpuBefore.servers['redis-server'], cpuAfter.servers['redis-server'])) : null
      const machineCpuUs = perRequest(used(cpuAfter.machine, cpuBefore?.machine))
      if (server.process.exited()) throw new Error(`${server.process.name} exited during ${name}:\n${server.process.output()}`)
      if (result.builtDuringWindow > 0) log(`  note: ${result.builtDuringWindow} requests of ${name} were signed during the window (prebuilt ones ran out)`)
      const codes = Object.entries(result.statusCodes).filter(([c]) => !c.startsWith('2'))
      const odd = codes.length || result.errors || result.timeouts ? `  non-2xx ${JSON.stringify(Object.fromEntries(codes))} errors ${result.errors} timeouts ${result.timeouts}` : ''
      const us = (v: number | null) => v?.toFixed(0) ?? '-'
      const cpu = `cpu/req core ${us(coreCpuUs)}${frontCpuUs === null ? '' : ` front ${us(frontCpuUs)}`} pg ${us(dbCpuUs)} redis ${us(redisCpuUs)} machine ${us(machineCpuUs)} µs`
      log(`  ${name.padEnd(26)} ${result.rps.toFixed(0).padStart(7)} rps  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  rss ${rss?.toFixed(1) ?? '-'} MB  ${cpu}${odd}`)
      if (codes.length && server.process.output()) log(`  ${server.process.name} said:\n${server.process.output().split('\n').slice(-5).join('\n')}`)
      return { ...measurement(result, rss), coreCpuUs, frontCpuUs, dbCpuUs, redisCpuUs, machineCpuUs }
    }
    // Enough requests for the window: the best rate seen so far with room to spare (a
    // warm-up underestimates a warm process); any shortfall is signed during the window
    // and reported.
    const sized = (rps: number, seconds: number, factor: number) => Math.min(prebuildCap, Math.ceil(Math.max(rps, 500) * seconds * factor) + 10 * s.connections)

    log(`warm-up: ${s.warmupSeconds} s per scenario`)
    const bestRps = new Map<string, number>()
    const seen = (name: string, rps: number) => bestRps.set(name, Math.max(rps, bestRps.get(name) ?? 0))
    const selected = s.only ? scenarioNames.filter((n) => s.only!.includes(n)) : [...scenarioNames]
    if (selected.length === 0) throw new Error(`--only names no scenario; choose from ${scenarioNames.join(', ')}`)
    for (const name of selected) seen(name, (await window(name, s.warmupSeconds, sized(10_000, s.warmupSeconds, 1))).rps)

    const windows = new Map<string, WindowMeasurement[]>()
    const record = (name: string, m: WindowMeasurement) => windows.set(name, [...(windows.get(name) ?? []), m])
    const slices = s.durationSeconds / s.sliceSeconds
    const schedule = passes(selected, s.rounds, slices)
    for (const [cycle, order] of schedule.entries()) {
      if (cycle % slices === 0) log(`round ${cycle / slices + 1}/${s.rounds}: ${s.durationSeconds} s per scenario, in ${slices} slice(s) of ${s.sliceSeconds} s`)
      for (const name of order) {
        const m = await window(name, s.sliceSeconds, sized(bestRps.get(name)!, s.sliceSeconds, cycle === 0 ? 2.5 : 2))
        seen(name, m.rps)
        record(name, m)
      }
    }

    const bare = windows.get('bare_proxy')
    const fixedRate = bare ? Math.max(1, Math.round(median(bare.map((w) => w.rps)) / 2)) : 0
    if (bare) log(`fixed rate: ${fixedRate} rps (half of bare_proxy's saturation throughput)`)
    for (let r = 0; bare && r < s.rounds; r++) {
      const order = r % 2 === 0 ? fixedRateNames : [...fixedRateNames].reverse()
      for (const name of order) record(name, await window(name, s.durationSeconds, sized(fixedRate, s.durationSeconds, 1.1), fixedRate))
    }

    const summaries = Object.fromEntries([...scenarioNames, ...fixedRateNames].map((name) => [name, summarize(windows.get(name) ?? [])]))
    const gatewayRss = scenarioNames
      .filter((n) => scenarios[n].target === 'gateway')
      .map((n) => summaries[n]!.rss_mb)
      .filter((v): v is number => v !== null)
    const results: BenchResults = {
      scenarios: summaries,
      ratios: ratios(Object.fromEntries(windows)),
      added_p99_ms: Number((summaries.gateway_oauth_fixed_rate!.p99_ms - summaries.core_direct_fixed_rate!.p99_ms).toFixed(3)),
      embedded_idle_rss_mb: Number(embeddedRss.toFixed(1)),
      gateway_rss_mb: gatewayRss.length ? Math.max(...gatewayRss) : null,
      fixed_rate_rps: fixedRate,
      node: process.version,
      cpus: cpus().length,
      settings: { mode: s.mode, rounds: s.rounds, duration_s: s.durationSeconds, slice_s: s.sliceSeconds, warmup_s: s.warmupSeconds, connections: s.connections, entries: s.entries },
    }
    mkdirSync(dirname(s.out), { recursive: true })
    writeFileSync(s.out, `${JSON.stringify(results, null, 2)}\n`)
    console.log(`\n${formatReport(results)}\n`)
    console.log(`targets met: ${targets(results).filter((x) => x.met).length}/${targets(results).length}; results written to ${s.out}`)

    const failed = Object.entries(summaries).filter(([, v]) => v.status_5xx > 0 || v.errors > 0)
    if (failed.length) {
      console.error(`benchmark failed: 5xx or errors in ${failed.map(([n]) => n).join(', ')}`)
      return 1
    }
    return 0
  } catch (err) {
    console.error(`benchmark failed: ${(err as Error).message}`)
    return 1
  } finally {
    await cleanup()
  }
}

main().then((code) => process.exit(code))
