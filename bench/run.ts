// `npm run bench` (docs/performance.md#how-it-measures): first the embedded footprint (`npm start` on an
// existing data directory), then the production topology on 127.0.0.1, seeded, and
// four groups, each measured side by side (interleaved slices, repeated, medians): the
// gateway alone in front of a fixed upstream against bare proxies and nginx; the latency
// at a fixed rate, as ratios to the bare proxy; the core's statuses/show against its
// anchor; the whole system on PostgreSQL and Redis (group 3 of docs/performance.md#the-groups-and-their-keys). Prints the tables with the targets and writes the
// result file. Any 5xx, transport error or failed request makes the exit status non-zero.
// Each group is one function of `groups` below, run in that order on the topology; a new
// group is a function of the same shape added to that list (and its figures to resultsOf).
//
//   node dist/bench/run.js [--quick] [--out FILE] [--rounds N] [--duration S] [--slice S] [--connections N]
//                          [--profile SCENARIO] [--node24 yes|no]
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { startLoadGenerator, type LoadGenerator } from './load-client.js'
import type { LoadResult } from './load-worker.js'
import { corePoolSize } from './anchor.js'
import { embeddedFootprint, type EmbeddedFootprint } from './embedded.js'
import { scaleConnections, type ScaleConnections } from './scale-connections.js'
import { scaleReplay, type ScaleReplay } from './scale-replay.js'
import { runScaleBench } from './scale/group.js'
import { findNginx, nginxVersion } from './nginx.js'
import { imageNode, nodeVersion } from './node24.js'
import { relyingParty, signInOnce, type SignInTarget } from './oidc-sign-in.js'
import { kigoShare, readProfile, type ProfileShare } from './profile.js'
import { commandCpuDeltaMs, commandCpuMs, cpuMs, descendants, killAllNow, machineBusyMs, sampleRss, stopAll, waitReady, type AppProcess } from './processes.js'
import { formatReport, type GatewayAlone, judgedRatio, median, pairedRatio, ratios, spreads, summarize, targets, targetsLine, timelineRatios, type BenchResults, type JudgedFigure, type WindowMeasurement } from './report.js'
import { aloneNames, type AloneName, coreNames, fixedRateNames, latencyNames, requestSource, scenarioNames, scenarios, type AnyScenario, type Fixture, type Target } from './scenarios.js'
import { seed } from './seed.js'
import { checkPublicTimeline } from './timeline-check.js'
import { seedTimeline } from './timeline-seed.js'
import { archivePath, passes, settingsFrom, usage, type Settings } from './settings.js'
import { createBenchDatabase, defaultDatabaseUrl, defaultRedisUrl, startAlone, startAloneGateway, startTopology, type AloneTopology, type Topology } from './topology.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

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

/** A server the load reaches: its URL, its process, and the processes whose CPU it spends. */
interface Server {
  url: string
  process: AppProcess | null
  pids: () => number[]
}

/** What every group measures with: the settings, the servers, and the windows measured so far. */
interface Bench {
  s: Settings
  /** Whether the group (or one of its scenarios) was asked for (--only). */
  want: (group: string) => boolean
  fixture: Fixture
  alone: AloneTopology
  servers: Record<Target, Server>
  /** Every window measured, by scenario. */
  windows: Map<string, WindowMeasurement[]>
  /** The best rate seen per scenario (sizes the requests built for a window). */
  bestRps: Map<string, number>
  /** One window of `name`: the load at saturation, or at a fixed rate when `paced`. */
  window: (name: AnyScenario, durationSeconds: number, prebuild: number, paced?: { rate: number; warmupSeconds: number }) => Promise<WindowMeasurement>
  /** Enough requests for a window at `rps` for `seconds`, with room `factor`. */
  sized: (rps: number, seconds: number, factor: number) => number
  /** Warm-up, then rounds of interleaved slices of `names` at saturation. */
  saturate: (group: string, names: AnyScenario[]) => Promise<void>
  /** Rounds of `names` at a fixed rate (see below); returns each round's rate. */
  paced: (group: string, names: AnyScenario[], rateFor: () => Promise<number>, seconds: number) => Promise<number[]>
  /** Figures a group found besides its windows, for the results. */
  found: { latencyRates: number[]; fixedRate: number; scale: { replay: ScaleReplay | null; connections: ScaleConnections | null }; aloneLoad: number[] }
}

function benchOn(s: Settings, t: Topology, a: AloneTopology, fixture: Fixture, loader: LoadGenerator): Bench {
  const base = (port: number) => `http://127.0.0.1:${port}`
  const nginxPids = () => (a.nginx ? [a.nginx.pid, ...descendants(a.nginx.pid)] : [])
  const servers: Record<Target, Server> = {
    core: { url: base(t.ports.core), process: t.core, pids: () => [t.core.pid] },
    bare: { url: base(t.ports.bare), process: t.bare, pids: () => [t.bare.pid] },
    gateway: { url: base(t.ports.gateway), process: t.gateway, pids: () => [t.gateway.pid] },
    anchor: { url: base(t.ports.anchor), process: t.anchor, pids: () => [t.anchor.pid] },
    anchor_required: { url: base(t.ports.anchorRequired), process: t.anchorRequired, pids: () => [t.anchorRequired.pid] },
    upstream: { url: base(a.ports.upstream), process: a.upstream, pids: () => [a.upstream.pid] },
    undici: { url: base(a.ports.undici), process: a.undici, pids: () => [a.undici.pid] },
    alone_bare: { url: base(a.ports.bare), process: a.bare, pids: () => [a.bare.pid] },
    nginx: { url: a.ports.nginx ? base(a.ports.nginx) : '', process: a.nginx, pids: nginxPids },
    alone_gateway: { url: base(a.ports.gateway), process: a.gateway, pids: () => [a.gateway.pid] },
    alone_gateway_no_oidc: { url: base(a.ports.gatewayNoOidc), process: a.gatewayNoOidc, pids: () => [a.gatewayNoOidc.pid] },
    alone_required: { url: base(a.ports.required), process: a.required, pids: () => [a.required.pid] },
  }
  const sumCpu = (pids: number[]) => {
    let total = 0
    for (const pid of pids) {
      const v = cpuMs(pid)
      if (v === null) return null
      total += v
    }
    return pids.length ? total : null
  }

  const window = async (name: AnyScenario, durationSeconds: number, prebuild: number, paced?: { rate: number; warmupSeconds: number }) => {
    const { target, kind } = scenarios[name]
    const server = servers[target]
    if (!server.process) throw new Error(`${name}: its server is not running`)
    const proc = server.process
    let sampler: { stop(): number | null } | undefined
    // CPU time of each process involved (and of the whole machine), read as the load
    // starts and again when it ends. The front is whatever process the load reaches.
    const cpuNow = () => ({
      core: cpuMs(servers.core.process!.pid),
      front: target === 'core' ? null : sumCpu(server.pids()),
      servers: commandCpuMs(['postgres', 'redis-server']),
      machine: machineBusyMs(),
    })
    let cpuBefore: ReturnType<typeof cpuNow> | undefined
    const result = await loader.run(
      { url: server.url, kind, fixture, durationSeconds, connections: s.connections, prebuild, ...(paced ? { overallRate: paced.rate, warmupSeconds: paced.warmupSeconds } : {}) },
      () => {
        sampler = sampleRss(proc.pid)
        cpuBefore = cpuNow()
      },
    )
    const rss = sampler?.stop() ?? null
    const cpuAfter = cpuNow()
    const requests = result.rps * durationSeconds
    const perRequest = (usedMs: number | null) => (usedMs === null || requests <= 0 ? null : (usedMs * 1000) / requests)
    const used = (x: number | null, y: number | null | undefined) => (x === null || y === null || y === undefined ? null : x - y)
    const coreCpuUs = perRequest(used(cpuAfter.core, cpuBefore?.core))
    const frontCpuUs = perRequest(used(cpuAfter.front, cpuBefore?.front))
    const dbCpuUs = cpuBefore ? perRequest(commandCpuDeltaMs(cpuBefore.servers.postgres, cpuAfter.servers.postgres)) : null
    const redisCpuUs = cpuBefore ? perRequest(commandCpuDeltaMs(cpuBefore.servers['redis-server'], cpuAfter.servers['redis-server'])) : null
    const machineCpuUs = perRequest(used(cpuAfter.machine, cpuBefore?.machine))
    if (proc.exited()) throw new Error(`${proc.name} exited during ${name}:\n${proc.output()}`)
    if (result.builtDuringWindow > 0) log(`  note: ${result.builtDuringWindow} requests of ${name} were signed during the window (prebuilt ones ran out)`)
    const codes = Object.entries(result.statusCodes).filter(([c]) => !c.startsWith('2'))
    const odd = codes.length || result.errors || result.timeouts ? `  non-2xx ${JSON.stringify(Object.fromEntries(codes))} errors ${result.errors} timeouts ${result.timeouts}` : ''
    const us = (v: number | null) => v?.toFixed(0) ?? '-'
    const cpu = `cpu/req core ${us(coreCpuUs)}${frontCpuUs === null ? '' : ` front ${us(frontCpuUs)}`} pg ${us(dbCpuUs)} redis ${us(redisCpuUs)} machine ${us(machineCpuUs)} µs`
    log(`  ${name.padEnd(26)} ${result.rps.toFixed(0).padStart(7)} rps  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  rss ${rss?.toFixed(1) ?? '-'} MB  ${cpu}${odd}`)
    if (codes.length && proc.output()) log(`  ${proc.name} said:\n${proc.output().split('\n').slice(-5).join('\n')}`)
    return { ...measurement(result, rss), coreCpuUs, frontCpuUs, dbCpuUs, redisCpuUs, machineCpuUs }
  }
  // Enough requests for the window: the best rate seen so far with room to spare (a
  // warm-up underestimates a warm process); any shortfall is signed during the window
  // and reported.
  const sized = (rps: number, seconds: number, factor: number) => Math.min(prebuildCap, Math.ceil(Math.max(rps, 500) * seconds * factor) + 10 * s.connections)
  const bestRps = new Map<string, number>()
  const seen = (name: string, rps: number) => bestRps.set(name, Math.max(rps, bestRps.get(name) ?? 0))
  const windows = new Map<string, WindowMeasurement[]>()
  const record = (name: string, m: WindowMeasurement) => windows.set(name, [...(windows.get(name) ?? []), m])

  const saturate = async (group: string, names: AnyScenario[]) => {
    const selected = s.only && !s.only.includes(group) ? names.filter((n) => s.only!.includes(n)) : names
    if (selected.length === 0) return
    log(`${group}: warm-up ${s.warmupSeconds} s per scenario`)
    for (const name of selected) seen(name, (await window(name, s.warmupSeconds, sized(10_000, s.warmupSeconds, 1))).rps)
    const slices = s.durationSeconds / s.sliceSeconds
    for (const [cycle, order] of passes(selected, s.rounds, slices).entries()) {
      if (cycle % slices === 0) log(`${group} round ${cycle / slices + 1}/${s.rounds}: ${s.durationSeconds} s per scenario, in ${slices} slice(s) of ${s.sliceSeconds} s`)
      for (const name of order) {
        const m = await window(name, s.sliceSeconds, sized(bestRps.get(name)!, s.sliceSeconds, cycle === 0 ? 2.5 : 2))
        seen(name, m.rps)
        record(name, m)
      }
    }
  }
  /**
   * Rounds of `names` at a fixed rate, the order rotated each round; each window's first
   * `pacedWarmupSeconds` not counted (paced-load.ts). `rateFor` gives each round's rate.
   */
  const paced = async (group: string, names: AnyScenario[], rateFor: () => Promise<number>, seconds: number) => {
    const warmupSeconds = s.pacedWarmupSeconds
    log(`${group}: ${seconds} s per scenario and round after ${warmupSeconds} s at that rate not counted`)
    const rates: number[] = []
    for (const [r, order] of passes(names, s.rounds, 1).entries()) {
      const rate = await rateFor()
      rates.push(rate)
      log(`${group} round ${r + 1}/${s.rounds}: ${rate} rps`)
      const ordered = r % 2 === 0 ? order : [...order].reverse()
      for (const name of ordered) record(name, await window(name, seconds, sized(rate, seconds + warmupSeconds, 1.1), { rate, warmupSeconds }))
    }
    return rates
  }

  return { s, want: wanted(s), fixture, alone: a, servers, windows, bestRps, window, sized, saturate, paced, found: { latencyRates: [], fixedRate: 0, scale: { replay: null, connections: null }, aloneLoad: [] } }
}

/** Whether `group` runs: every group without --only; with it, a group named, or one of its scenarios. */
const wanted = (s: Settings) => (group: string) =>
  !s.only || s.only.some((n) => n === group || n.startsWith(`${group}_`) || (group === 'whole' && (scenarioNames as readonly string[]).includes(n)))

/** The alone group's scenarios: nginx's only when it is installed. */
const aloneSelected = (b: Bench) => aloneNames.filter((n) => n !== 'alone_nginx' || b.alone.nginx !== null)

// ---- the groups ------------------------------------------------------------------------

/** The embedded footprint: `npm start` on an existing data directory (before the topology starts). */
async function measureEmbedded(s: Settings): Promise<EmbeddedFootprint> {
  log('embedded mode: npm start on an existing data directory')
  const embedded = await embeddedFootprint({ settleMs: s.embeddedSettleMs })
  log(`  ready in ${embedded.start_s} s (CPU ${embedded.start_cpu_s} s), idle RSS ${embedded.idle_rss_mb} MB, after 1,000 mixed requests ${embedded.loaded_rss_mb} MB (${embedded.failed} not 2xx)`)
  return embedded
}

/** The gateway alone in front of a fixed upstream, against the bare proxies and nginx. */
async function measureAlone(b: Bench): Promise<void> {
  if (!b.want('alone')) return
  // The machine's load average (one minute) as the group starts and as it ends: part of
  // the run's machine reference.
  b.found.aloneLoad.push(loadavg()[0]!)
  await b.saturate('alone', aloneSelected(b))
  b.found.aloneLoad.push(loadavg()[0]!)
}

/** The latency at a fixed rate: half the bare proxy's saturation, as p99 ratios to it. */
async function measureLatency(b: Bench): Promise<void> {
  const { s, bestRps } = b
  // Half the bare proxy's saturation, measured again before each round in a slice of its
  // own: this machine's speed drifts by a third within minutes (the bare proxy's CPU per
  // request at one fixed rate went from 129 to 210 µs in one run), and a rate taken from
  // the throughput group minutes earlier left the whole last round saturated.
  const bareAlone = b.windows.get('alone_bare_proxy')
  const halfBareSaturation = async () => {
    const m = await b.window('alone_bare_proxy', s.sliceSeconds, b.sized(bestRps.get('alone_bare_proxy')!, s.sliceSeconds, 2))
    return Math.max(1, Math.round(m.rps / 2))
  }
  if (bareAlone && b.want('latency')) b.found.latencyRates = await b.paced('latency', [...latencyNames], halfBareSaturation, s.latencySeconds)
}

/** The core's statuses/show against its anchors. */
async function measureCore(b: Bench): Promise<void> {
  if (!b.want('core')) return
  const { servers, fixture } = b
  // Both anchors must answer a plain request with the core's bytes, and the floor a
  // signed viewer too, or the comparison means nothing.
  const checks = [
    { source: requestSource('anonymous', fixture), anchors: [servers.anchor.url, servers.anchor_required.url] },
    { source: requestSource('identified', fixture), anchors: [servers.anchor_required.url] },
  ]
  for (const { source, anchors } of checks) {
    for (let i = 0; i < 3; i++) {
      const { path, headers } = source()
      const [fromCore, ...fromAnchors] = await Promise.all([servers.core.url, ...anchors].map(async (u) => (await request(`${u}${path}`, { headers })).body.text()))
      for (const fromAnchor of fromAnchors) {
        if (fromCore !== fromAnchor) throw new Error(`an anchor's answer differs from the core's for ${path} ${JSON.stringify(headers)}:\n${fromCore}\n${fromAnchor}`)
      }
    }
  }
  await b.saturate('core', [...coreNames])
}

/** The whole system at saturation, then at half the bare proxy's rate. */
async function measureWhole(b: Bench): Promise<void> {
  if (b.want('whole')) await b.saturate('whole', [...scenarioNames])
  const bare = b.windows.get('bare_proxy')
  const fixedRate = bare ? Math.max(1, Math.round(median(bare.map((w) => w.rps)) / 2)) : 0
  b.found.fixedRate = fixedRate
  if (bare && b.want('whole')) await b.paced('whole system fixed rate', [...fixedRateNames], () => Promise.resolve(fixedRate), b.s.durationSeconds)
}

/**
 * Replay-cache memory and idle connections (bench/scale-replay.ts, bench/scale-connections.ts),
 * each on processes of its own: with `--only scale_replay` / `scale_connections`;
 * `--only scale` runs them after the sizes (bench/scale/group.ts).
 */
async function measureScaleParts(b: Bench): Promise<void> {
  // Named only: like the scale group, not part of the default run nor of --quick.
  const named = (part: string) => b.s.only?.includes(part) === true
  const quick = b.s.mode === 'quick'
  if (named('scale_replay')) b.found.scale.replay = await scaleReplay(quick ? { nonces: 20_000, requests: 20 } : {})
  if (named('scale_connections')) b.found.scale.connections = await scaleConnections(quick ? { connections: 500 } : {})
}

/**
 * The groups measured on the production topology, in this order (latency reads the alone
 * group's bare proxy). A group is a function of the Bench: it checks b.want(its name),
 * measures with b.saturate or b.paced, and leaves any figure besides its windows in b.found.
 */
const groups: Array<(b: Bench) => Promise<void>> = [measureAlone, measureLatency, measureCore, measureWhole, measureScaleParts]

// ---- the results ---------------------------------------------------------------------

const summariesOf = (windows: Map<string, WindowMeasurement[]>, names: readonly string[]) => Object.fromEntries(names.map((name) => [name, summarize(windows.get(name) ?? [])]))
const strip = (prefix: string, rows: Record<string, ReturnType<typeof summarize>>) => Object.fromEntries(Object.entries(rows).map(([k, v]) => [k.replace(prefix, ''), v]))

/** The gateway-alone group's figures, with the machine reference they were measured at. */
function aloneResultsOf(b: Bench, nginx: string | null): GatewayAlone {
  const all = Object.fromEntries(b.windows)
  const a = b.alone
  const aloneScenarios: Record<string, ReturnType<typeof summarize> | null> = strip('alone_', summariesOf(b.windows, aloneSelected(b)))
  if (!a.nginx) aloneScenarios.nginx = null
  const r = (x: string, y: string) => pairedRatio(all, x, y)
  const ratioOf = (figure: JudgedFigure) => judgedRatio(all, figure)
  const load = b.found.aloneLoad
  return {
      node: a.node === process.execPath ? process.version : nodeVersion(a.node),
      nginx,
      reference: {
        bare_proxy_cpu_us: aloneScenarios.bare_proxy?.front_cpu_us ?? null,
        nginx_cpu_us: aloneScenarios.nginx?.front_cpu_us ?? null,
        load_average: load.length === 2 ? { start: Number(load[0]!.toFixed(2)), end: Number(load[1]!.toFixed(2)) } : null,
      },
      scenarios: aloneScenarios,
      ratios: {
        anonymous_vs_bare_proxy: ratioOf('gateway_alone.ratios.anonymous_vs_bare_proxy'),
        basic_vs_bare_proxy: ratioOf('gateway_alone.ratios.basic_vs_bare_proxy'),
        wsse_vs_bare_proxy: ratioOf('gateway_alone.ratios.wsse_vs_bare_proxy'),
        oauth_vs_bare_proxy: ratioOf('gateway_alone.ratios.oauth_vs_bare_proxy'),
        oauth2_vs_bare_proxy: ratioOf('gateway_alone.ratios.oauth2_vs_bare_proxy'),
        oauth2_vs_oauth: ratioOf('gateway_alone.ratios.oauth2_vs_oauth'),
        bare_proxy_vs_nginx: a.nginx ? r('alone_bare_proxy', 'alone_nginx') : null,
        anonymous_vs_nginx: a.nginx ? r('alone_anonymous', 'alone_nginx') : null,
        undici_proxy_vs_bare_proxy: r('alone_undici_proxy', 'alone_bare_proxy'),
        required_anonymous_vs_bare_proxy: r('alone_required_anonymous', 'alone_bare_proxy'),
        required_basic_vs_bare_proxy: r('alone_required_basic', 'alone_bare_proxy'),
        required_wsse_vs_bare_proxy: r('alone_required_wsse', 'alone_bare_proxy'),
        required_oauth_vs_bare_proxy: r('alone_required_oauth', 'alone_bare_proxy'),
        required_oauth2_vs_bare_proxy: r('alone_required_oauth2', 'alone_bare_proxy'),
        anonymous_vs_required: r('alone_anonymous', 'alone_required_anonymous'),
        basic_vs_required: r('alone_basic', 'alone_required_basic'),
        wsse_vs_required: r('alone_wsse', 'alone_required_wsse'),
        oauth_vs_required: r('alone_oauth', 'alone_required_oauth'),
        oauth2_vs_required: r('alone_oauth2', 'alone_required_oauth2'),
        anonymous_vs_no_oidc: ratioOf('gateway_alone.ratios.anonymous_vs_no_oidc'),
      },
  }
}

function resultsOf(b: Bench, embedded: EmbeddedFootprint | null, nginx: string | null, node24: GatewayAlone | null, profile: ProfileShare | null): BenchResults {
  const { s, windows } = b
  const { latencyRates, fixedRate } = b.found
  const latencyRate = latencyRates.length ? Math.round(median(latencyRates)) : 0
  const all = Object.fromEntries(windows)
  const summaries = (names: readonly string[]) => summariesOf(windows, names)
  const whole = summaries([...scenarioNames, ...fixedRateNames])
  const gatewayRss = scenarioNames.filter((n) => scenarios[n].target === 'gateway').map((n) => whole[n]!.rss_mb).filter((v): v is number => v !== null)
  const r = (x: string, y: string) => pairedRatio(all, x, y)
  const p99 = (x: string) => pairedRatio(all, x, 'latency_bare_proxy', 'p99Ms')
  const ratioOf = (figure: JudgedFigure) => judgedRatio(all, figure)
  return {
    gateway_alone: aloneResultsOf(b, nginx),
    gateway_alone_node24: node24,
    profile,
    core: {
      pool_size: corePoolSize,
      scenarios: strip('core_', summaries(coreNames)),
      ratios: {
        show_vs_anchor: ratioOf('core.ratios.show_vs_anchor'),
        show_identified_vs_anonymous: ratioOf('core.ratios.show_identified_vs_anonymous'),
        required_vs_anchor: r('core_required_show', 'core_anchor_show'),
        show_vs_required: r('core_show', 'core_required_show'),
        required_identified_vs_anonymous: r('core_required_show_identified', 'core_required_show'),
        show_identified_vs_required: r('core_show_identified', 'core_required_show_identified'),
      },
    },
    latency: {
      fixed_rate_rps: latencyRate,
      round_rates_rps: latencyRates,
      scenarios: strip('latency_', summaries(latencyNames)),
      p99_ratio: {
        anonymous_vs_bare_proxy: p99('latency_anonymous'),
        basic_vs_bare_proxy: p99('latency_basic'),
        wsse_vs_bare_proxy: p99('latency_wsse'),
        oauth_vs_bare_proxy: ratioOf('latency.p99_ratio.oauth_vs_bare_proxy'),
        required_oauth_vs_bare_proxy: p99('latency_required_oauth'),
      },
    },
    embedded: embedded && { start_s: embedded.start_s, start_cpu_s: embedded.start_cpu_s, idle_rss_mb: embedded.idle_rss_mb, loaded_rss_mb: embedded.loaded_rss_mb },
    scenarios: whole,
    ratios: { ...ratios(all), ...timelineRatios(all) },
    added_p99_ms: whole.gateway_oauth_fixed_rate!.windows && whole.core_direct_fixed_rate!.windows ? Number((whole.gateway_oauth_fixed_rate!.p99_ms - whole.core_direct_fixed_rate!.p99_ms).toFixed(3)) : null,
    gateway_rss_mb: gatewayRss.length ? Math.max(...gatewayRss) : null,
    fixed_rate_rps: fixedRate,
    spread: spreads(all),
    node: process.version,
    cpus: cpus().length,
    settings: { mode: s.mode, rounds: s.rounds, duration_s: s.durationSeconds, slice_s: s.sliceSeconds, warmup_s: s.warmupSeconds, paced_warmup_s: s.pacedWarmupSeconds, connections: s.connections, entries: s.entries, timeline_entries: s.timelineEntries },
  }
}

/** The results file (and its archive copy), then the tables and the targets on stdout. */
function writeResults(s: Settings, results: BenchResults, scale: Bench['found']['scale']): void {
  mkdirSync(dirname(s.out), { recursive: true })
  // Each target's verdict beside its floor, as printed, for a reader of the file alone.
  const judged = targets(results)
  const written = `${JSON.stringify({ ...results, scale, targets: judged.map(({ name, value, bound, floor, spread, verdict }) => ({ name, value, spread, bound, floor, verdict })) }, null, 2)}\n`
  writeFileSync(s.out, written)
  const archive = archivePath(s, root, new Date())
  if (archive) {
    mkdirSync(dirname(archive), { recursive: true })
    writeFileSync(archive, written)
  }
  console.log(`\n${formatReport(results, judged)}\n`)
  console.log(`${targetsLine(judged)}; results written to ${s.out}${archive ? ` and ${archive}` : ''}`)
}

/**
 * The gateway-alone group again, every Node process of it on the image's Node 24
 * (node24.ts), after the Node 20 servers have stopped; its gateway too has served OpenID
 * Connect first.
 */
async function onImageNode(b: Bench, started: Started, signIn: (gatewayUrl: string) => Promise<void>): Promise<Bench> {
  const node = imageNode(log)
  log(`gateway alone on ${nodeVersion(node)}`)
  await started.alone?.stop()
  const alone = (started.alone = await startAlone(topologyOf(started), b.fixture, node))
  await signIn(`http://127.0.0.1:${alone.ports.gateway}`)
  const again = benchOn(b.s, topologyOf(started), alone, b.fixture, started.loader!)
  await measureAlone(again)
  return again
}

const topologyOf = (started: Started): Topology => {
  if (!started.topology) throw new Error('the topology is not running')
  return started.topology
}

/**
 * A CPU profile of a gateway of its own (production flags, OpenID Connect served first)
 * under one window of `scenario`'s load (profile.ts); the profile stays in a directory
 * under the system's temporary directory, which the run prints.
 */
async function profiled(b: Bench, started: Started, scenario: AloneName, signIn: (gatewayUrl: string) => Promise<void>): Promise<ProfileShare> {
  const dir = mkdtempSync(join(tmpdir(), 'kigo-bench-profile-'))
  const { app, port } = await startAloneGateway('gateway (profiled)', topologyOf(started), b.servers.upstream.url, join(dir, 'data'), { profileDir: join(dir, 'profile') })
  try {
    await waitReady(app, `http://127.0.0.1:${port}/readyz`)
    await signIn(`http://127.0.0.1:${port}`)
  } catch (err) {
    await app.stop()
    throw err
  }
  const profiling = benchOn(b.s, topologyOf(started), { ...b.alone, gateway: app, ports: { ...b.alone.ports, gateway: port } }, b.fixture, started.loader!)
  const seconds = Math.max(b.s.durationSeconds, 4)
  log(`profile: ${scenario} for ${seconds} s after ${b.s.warmupSeconds} s not counted`)
  await profiling.window(scenario, b.s.warmupSeconds, profiling.sized(10_000, b.s.warmupSeconds, 1))
  const from = process.hrtime.bigint()
  await profiling.window(scenario, seconds, profiling.sized(b.bestRps.get(scenario) ?? 10_000, seconds, 2))
  const to = process.hrtime.bigint()
  await app.stop()
  const { file, profile } = readProfile(join(dir, 'profile'))
  const share = kigoShare(profile, Number(from / 1000n), Number(to / 1000n))
  log(`profile: ${join(dir, 'profile', file)}; kigo's own code ${share.percent} % of ${share.samples} samples (${share.files.map((f) => `${f.file} ${f.percent} %`).join(', ')})`)
  return { scenario, node: process.version, samples: share.samples, kigo_percent: share.percent, kigo_files: share.files, file }
}

/** What the benchmark started, for the cleanup (on exit and on a signal). */
interface Started {
  database?: { url: string; drop(): Promise<void> }
  topology?: Topology
  alone?: AloneTopology
  loader?: LoadGenerator
}

/** The production topology on a bench database, seeded, and the gateway-alone servers. */
async function startAll(s: Settings, started: Started): Promise<{ bench: Bench; nginx: string | null; signIn: (gatewayUrl: string) => Promise<void> }> {
  const databaseUrl = process.env.DATABASE_URL ?? defaultDatabaseUrl
  const redisUrl = process.env.REDIS_URL ?? defaultRedisUrl
  const database = (started.database = await createBenchDatabase(databaseUrl))
  log(`production topology: core and gateway processes on PostgreSQL ${new URL(database.url).pathname.slice(1)} and Redis`)
  const topology = (started.topology = await startTopology({ databaseUrl: database.url, redisUrl }))
  const base = (port: number) => `http://127.0.0.1:${port}`
  log(`seeding: user, application, ${s.tokens} tokens, ${s.entries} entries`)
  const seeded = await seed({
    adminUrl: base(topology.ports.admin),
    adminToken: topology.adminToken,
    gatewayUrl: base(topology.ports.gateway),
    host: topology.host,
    entries: s.entries,
    tokens: s.tokens,
  })
  const fixture: Fixture = { ...seeded, identity: { secretKey: topology.env.KIGO_SECRET_KEY!, userName: 'Bench User' } }
  // Every gateway measured has served OpenID Connect discovery and a sign-in, as one in
  // production has (oidc-sign-in.ts); the whole system's gateway first.
  const client = await relyingParty(base(topology.ports.admin), topology.adminToken, fixture.user.id)
  const signIn = (gatewayUrl: string) => signInOnce({ gatewayUrl, host: fixture.host, user: { id: fixture.user.id, password: fixture.user.password! }, client } satisfies SignInTarget)
  await signIn(base(topology.ports.gateway))
  log('OpenID Connect: discovery and a sign-in served by the gateway')
  const timeline = await seedTimeline({ databaseUrl: database.url, total: s.timelineEntries })
  log(`seeding the timeline store: ${timeline.inserted} entries in bulk in ${timeline.ms} ms, ${timeline.entries} in all`)
  await checkPublicTimeline(base(topology.ports.gateway), fixture)
  const nginxBinary = findNginx()
  const nginx = nginxBinary ? nginxVersion(nginxBinary) : null
  log(`gateway alone: fixed upstream, node:http + undici proxy, bare reply-from proxy, ${nginx ? `nginx (${nginx})` : 'no nginx (not installed: its figures are null)'}, gateway`)
  const alone = (started.alone = await startAlone(topology, fixture))
  await signIn(base(alone.ports.gateway))
  const loader = (started.loader = startLoadGenerator())
  return { bench: benchOn(s, topology, alone, fixture, loader), nginx, signIn }
}

async function main(): Promise<number> {
  let settings: Settings | null
  try {
    settings = settingsFrom(process.argv.slice(2))
  } catch (err) {
    console.error(`benchmark: ${(err as Error).message}\n${usage}`)
    return 2
  }
  if (settings === null) {
    console.log(usage)
    return 0
  }
  const s = settings
  // The benchmark measures the code in dist/, and `npm start` (the embedded start) would
  // compile a stale dist/ first and time the compiler: sources newer than the build stop it.
  if (spawnSync(process.execPath, [join(root, 'bin', 'build.js'), '--check'], { stdio: 'inherit' }).status !== 0) {
    console.error('benchmark: dist/ is older than the sources; `npm run bench` (or `npm run build` first) measures the code as it is')
    return 2
  }

  if (s.only?.includes('scale')) return runScaleBench(s, process.env.DATABASE_URL ?? defaultDatabaseUrl, log)

  const started: Started = {}
  let cleaning: Promise<void> | undefined
  const cleanup = () =>
    (cleaning ??= (async () => {
      started.loader?.stop()
      await started.alone?.stop().catch(() => undefined)
      await started.topology?.stop().catch(() => undefined)
      await stopAll()
      await started.database?.drop().catch((err: Error) => log(`could not drop the bench database: ${err.message}`))
    })())
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`\n${signal}: stopping everything the benchmark started`)
      void cleanup().finally(() => process.exit(130))
    })
  }
  process.once('exit', killAllNow)

  try {
    const embedded = wanted(s)('embedded') ? await measureEmbedded(s) : null
    const { bench, nginx, signIn } = await startAll(s, started)
    for (const group of groups) await group(bench)
    const node24 = s.node24 && bench.want('alone') ? await onImageNode(bench, started, signIn) : null
    const profile = s.profile ? await profiled(node24 ?? bench, started, s.profile as AloneName, signIn) : null
    writeResults(s, resultsOf(bench, embedded, nginx, node24 && aloneResultsOf(node24, nginx), profile), bench.found.scale)

    const failed = [...bench.windows.entries(), ...(node24?.windows.entries() ?? [])].filter(([, ws]) => ws.some((w) => w.status5xx > 0 || w.errors > 0)).map(([n]) => n)
    if (embedded && embedded.failed > 0) failed.push(`embedded (${embedded.failed} mixed requests not 2xx)`)
    if (failed.length) {
      console.error(`benchmark failed: 5xx or errors in ${failed.join(', ')}`)
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

process.exit(await main())
