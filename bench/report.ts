// Turns the measured windows into the benchmark's result file and its printed table:
// medians over rounds, the ratios of SPEC §8, and each target marked met or not.
export interface WindowMeasurement {
  rps: number
  p50Ms: number
  p99Ms: number
  rssMb: number | null
  non2xx: number
  status5xx: number
  errors: number
  /** CPU time per request of the core and of the front process (proxy or gateway), in µs. */
  coreCpuUs?: number | null
  frontCpuUs?: number | null
  /** CPU time per request of the local PostgreSQL and Redis servers, and of the whole machine, in µs. */
  dbCpuUs?: number | null
  redisCpuUs?: number | null
  machineCpuUs?: number | null
}

export interface ScenarioSummary {
  rps: number
  p50_ms: number
  p99_ms: number
  /** Max RSS of the process serving the scenario, over all its windows. */
  rss_mb: number | null
  non2xx: number
  status_5xx: number
  errors: number
  windows: number
  /** CPU time per request (median over windows) of the core and of the front process, µs. */
  core_cpu_us: number | null
  front_cpu_us: number | null
  /** The same for the local PostgreSQL and Redis servers, and for the whole machine (every process and the kernel). */
  db_cpu_us: number | null
  redis_cpu_us: number | null
  machine_cpu_us: number | null
}

export interface Ratios {
  anonymous_vs_bare_proxy: number
  oauth_vs_anonymous: number
  basic_vs_anonymous: number
  wsse_vs_anonymous: number
}

export interface BenchResults {
  scenarios: Record<string, ScenarioSummary>
  ratios: Ratios
  added_p99_ms: number
  embedded_idle_rss_mb: number
  /** Max RSS of the gateway process over the gateway scenarios. */
  gateway_rss_mb: number | null
  fixed_rate_rps: number
  node: string
  cpus: number
  settings: { mode: 'quick' | 'full'; rounds: number; duration_s: number; slice_s: number; warmup_s: number; connections: number; entries: number }
}

export interface Target {
  name: string
  value: number | null
  /** Human-readable bound. */
  bound: string
  met: boolean
  unit: string
}

export function median(values: number[]): number {
  if (values.length === 0) return 0
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const round = (v: number, digits: number) => Number(v.toFixed(digits))

export function summarize(windows: WindowMeasurement[]): ScenarioSummary {
  const rss = windows.map((w) => w.rssMb).filter((v): v is number => v !== null)
  return {
    rps: round(median(windows.map((w) => w.rps)), 1),
    p50_ms: round(median(windows.map((w) => w.p50Ms)), 3),
    p99_ms: round(median(windows.map((w) => w.p99Ms)), 3),
    rss_mb: rss.length ? round(Math.max(...rss), 1) : null,
    non2xx: windows.reduce((a, w) => a + w.non2xx, 0),
    status_5xx: windows.reduce((a, w) => a + w.status5xx, 0),
    errors: windows.reduce((a, w) => a + w.errors, 0),
    windows: windows.length,
    core_cpu_us: cpuMedian(windows.map((w) => w.coreCpuUs)),
    front_cpu_us: cpuMedian(windows.map((w) => w.frontCpuUs)),
    db_cpu_us: cpuMedian(windows.map((w) => w.dbCpuUs)),
    redis_cpu_us: cpuMedian(windows.map((w) => w.redisCpuUs)),
    machine_cpu_us: cpuMedian(windows.map((w) => w.machineCpuUs)),
  }
}

function cpuMedian(values: Array<number | null | undefined>): number | null {
  const known = values.filter((v): v is number => typeof v === 'number')
  return known.length ? round(median(known), 0) : null
}

/**
 * Each ratio is the median over passes of that pass's ratio (a pass runs every scenario
 * once, one slice each): the two sides of a pass ran seconds apart, so a slow spell of
 * the machine affects both alike, where a ratio of medians would pair windows far apart.
 */
export function ratios(windows: Record<string, WindowMeasurement[]>): Ratios {
  const ratio = (a: string, b: string) => {
    const as = windows[a] ?? []
    const bs = windows[b] ?? []
    const perRound = as.slice(0, bs.length).map((w, i) => (bs[i]!.rps > 0 ? w.rps / bs[i]!.rps : 0))
    return perRound.length ? round(median(perRound), 3) : 0
  }
  return {
    anonymous_vs_bare_proxy: ratio('gateway_anonymous', 'bare_proxy'),
    oauth_vs_anonymous: ratio('gateway_oauth', 'gateway_anonymous'),
    basic_vs_anonymous: ratio('gateway_basic', 'gateway_anonymous'),
    wsse_vs_anonymous: ratio('gateway_wsse', 'gateway_anonymous'),
  }
}

/** SPEC §8's targets, each with its measured value. */
export function targets(r: BenchResults): Target[] {
  const atLeast = (name: string, value: number, min: number): Target => ({ name, value, bound: `>= ${min.toFixed(2)}`, met: value >= min, unit: '' })
  return [
    atLeast('gateway_anonymous / bare_proxy rps', r.ratios.anonymous_vs_bare_proxy, 0.9),
    atLeast('gateway_oauth / gateway_anonymous rps', r.ratios.oauth_vs_anonymous, 0.85),
    atLeast('gateway_basic / gateway_anonymous rps', r.ratios.basic_vs_anonymous, 0.95),
    atLeast('gateway_wsse / gateway_anonymous rps', r.ratios.wsse_vs_anonymous, 0.85),
    { name: `added p99 at ${Math.round(r.fixed_rate_rps)} rps (oauth - core)`, value: r.added_p99_ms, bound: '<= 2 ms', met: r.added_p99_ms <= 2, unit: ' ms' },
    { name: 'gateway RSS under load', value: r.gateway_rss_mb, bound: '<= 200 MB', met: r.gateway_rss_mb !== null && r.gateway_rss_mb <= 200, unit: ' MB' },
  ]
}

function table(header: string[], rows: string[][], rightAligned: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (rightAligned[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

const fmt = (v: number | null, digits: number) => (v === null ? '-' : v.toFixed(digits))

export function formatReport(r: BenchResults): string {
  const rows = Object.entries(r.scenarios).map(([name, s]) => [
    name,
    fmt(s.rps, 0),
    fmt(s.p50_ms, 2),
    fmt(s.p99_ms, 2),
    fmt(s.rss_mb, 1),
    String(s.non2xx),
    String(s.status_5xx),
    String(s.errors),
    fmt(s.core_cpu_us, 0),
    fmt(s.front_cpu_us, 0),
    fmt(s.db_cpu_us, 0),
    fmt(s.redis_cpu_us, 0),
    fmt(s.machine_cpu_us, 0),
  ])
  const scenarioTable = table(
    ['scenario', 'rps', 'p50 ms', 'p99 ms', 'rss MB', 'non-2xx', '5xx', 'errors', 'core µs/req', 'front µs/req', 'pg µs/req', 'redis µs/req', 'machine µs/req'],
    rows,
    [false, true, true, true, true, true, true, true, true, true, true, true, true],
  )
  const targetRows = targets(r).map((t) => [t.name, t.value === null ? '-' : `${t.unit === '' ? t.value.toFixed(3) : t.value.toFixed(2)}${t.unit}`, t.bound, t.met ? 'met' : 'NOT met'])
  const targetTable = table(['target', 'measured', 'bound', ''], targetRows, [false, true, false, false])
  const s = r.settings
  return [
    `kigo benchmark (${s.mode}): node ${r.node}, ${r.cpus} CPUs, ${s.rounds} round(s) of ${s.duration_s} s per scenario (interleaved slices of ${s.slice_s} s) after ${s.warmup_s} s warm-up, ${s.connections} connections, ${s.entries} entries; medians over slices`,
    '',
    scenarioTable,
    '',
    targetTable,
    '',
    `embedded mode idle RSS: ${r.embedded_idle_rss_mb.toFixed(1)} MB`,
  ].join('\n')
}
