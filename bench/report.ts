// Turns the measured windows into the benchmark's result file and its printed table:
// medians over rounds, the ratios of docs/performance.md#how-it-measures, and each target marked met or not.
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

/** A ratio of two scenarios measured side by side; null when either did not run (`--only`). */
export type Ratio = number | null

/** The first and third quartiles of a ratio's passes (ratioSpread); null when too few passes ran. */
export type Spread = [number, number] | null

/**
 * The paired ratios that targets judge, by their place in the results file: the scenario
 * over its reference. Both the median (judgedRatio, in run.ts and ratios()) and the
 * spread (spreads) are read from here, so each judged pair is named once.
 */
const judgedPairs = {
  'gateway_alone.ratios.anonymous_vs_bare_proxy': ['alone_anonymous', 'alone_bare_proxy', 'rps'],
  'gateway_alone.ratios.basic_vs_bare_proxy': ['alone_basic', 'alone_bare_proxy', 'rps'],
  'gateway_alone.ratios.wsse_vs_bare_proxy': ['alone_wsse', 'alone_bare_proxy', 'rps'],
  'gateway_alone.ratios.oauth_vs_bare_proxy': ['alone_oauth', 'alone_bare_proxy', 'rps'],
  'gateway_alone.ratios.oauth2_vs_bare_proxy': ['alone_oauth2', 'alone_bare_proxy', 'rps'],
  'gateway_alone.ratios.oauth2_vs_oauth': ['alone_oauth2', 'alone_oauth', 'rps'],
  'gateway_alone.ratios.anonymous_vs_no_oidc': ['alone_anonymous', 'alone_anonymous_no_oidc', 'rps'],
  'core.ratios.show_vs_anchor': ['core_show', 'core_anchor_show', 'rps'],
  'core.ratios.show_identified_vs_anonymous': ['core_show_identified', 'core_show', 'rps'],
  'latency.p99_ratio.oauth_vs_bare_proxy': ['latency_oauth', 'latency_bare_proxy', 'p99Ms'],
  'ratios.anonymous_vs_bare_proxy': ['gateway_anonymous', 'bare_proxy', 'rps'],
  'ratios.oauth_vs_anonymous': ['gateway_oauth', 'gateway_anonymous', 'rps'],
  'ratios.basic_vs_anonymous': ['gateway_basic', 'gateway_anonymous', 'rps'],
  'ratios.wsse_vs_anonymous': ['gateway_wsse', 'gateway_anonymous', 'rps'],
} as const satisfies Record<string, readonly [string, string, 'rps' | 'p99Ms']>
export type JudgedFigure = keyof typeof judgedPairs
export const judgedFigures = Object.keys(judgedPairs) as JudgedFigure[]

/** A judged ratio's median over its passes (pairedRatio). */
export function judgedRatio(windows: Record<string, WindowMeasurement[]>, figure: JudgedFigure): Ratio {
  const [a, b, field] = judgedPairs[figure]
  return pairedRatio(windows, a, b, field)
}

/** Each judged ratio's middle half of passes (ratioSpread), by its place in the results file. */
export function spreads(windows: Record<string, WindowMeasurement[]>): Record<JudgedFigure, Spread> {
  return Object.fromEntries(
    judgedFigures.map((f) => {
      const [a, b, field] = judgedPairs[f]
      return [f, ratioSpread(windows, a, b, field)]
    }),
  ) as Record<JudgedFigure, Spread>
}

export interface Ratios {
  anonymous_vs_bare_proxy: Ratio
  oauth_vs_anonymous: Ratio
  basic_vs_anonymous: Ratio
  wsse_vs_anonymous: Ratio
}

/**
 * Issue 14: a page of 20 of the public timeline over statuses/show through the gateway,
 * anonymous and with OAuth, measured side by side in the whole-system group.
 */
export interface TimelineRatios {
  public_timeline_vs_show: Ratio
  public_timeline_oauth_vs_show_oauth: Ratio
}

export function timelineRatios(windows: Record<string, WindowMeasurement[]>): TimelineRatios {
  return {
    public_timeline_vs_show: pairedRatio(windows, 'gateway_public_timeline', 'gateway_anonymous'),
    public_timeline_oauth_vs_show_oauth: pairedRatio(windows, 'gateway_public_timeline_oauth', 'gateway_oauth'),
  }
}

export interface GatewayAloneRatios {
  anonymous_vs_bare_proxy: Ratio
  basic_vs_bare_proxy: Ratio
  wsse_vs_bare_proxy: Ratio
  oauth_vs_bare_proxy: Ratio
  /** OAuth 2.0 (Bearer, a JWT verified at the gateway) over the bare proxy. */
  oauth2_vs_bare_proxy: Ratio
  /** OAuth 2.0 over OAuth 1.0a, side by side: a Bearer request costs no more than a signed one when ≥ 1. */
  oauth2_vs_oauth: Ratio
  /** Null when nginx is not installed. */
  bare_proxy_vs_nginx: number | null
  /** The gateway's anonymous requests over nginx's; null when nginx is not installed. */
  anonymous_vs_nginx: number | null
  undici_proxy_vs_bare_proxy: Ratio
  /** The required-work proxy (bench/required-work-proxy.ts) over the bare proxy: how far the required work alone lets a gateway come. */
  required_anonymous_vs_bare_proxy: Ratio
  required_basic_vs_bare_proxy: Ratio
  required_wsse_vs_bare_proxy: Ratio
  required_oauth_vs_bare_proxy: Ratio
  required_oauth2_vs_bare_proxy: Ratio
  /** The gateway over the required-work proxy, same credential: the share of the distance that is kigo's own. */
  anonymous_vs_required: Ratio
  basic_vs_required: Ratio
  wsse_vs_required: Ratio
  oauth_vs_required: Ratio
  oauth2_vs_required: Ratio
  /** Anonymous requests of a gateway that has served OpenID Connect over one that never has: 1 minus the provider's cost to every later request. */
  anonymous_vs_no_oidc: Ratio
}

/**
 * The machine a gateway-alone run had: the bare proxy's and nginx's CPU per request (µs,
 * medians over the run's slices) and the load average (one minute) as the group started
 * and ended. A ratio to nginx moves with these: compare such ratios only between runs
 * whose references are alike.
 */
export interface MachineReference {
  bare_proxy_cpu_us: number | null
  nginx_cpu_us: number | null
  load_average: { start: number; end: number } | null
}

/** The gateway-alone group on one Node. */
export interface GatewayAlone {
  node: string
  /** nginx's version (`nginx -v`), or null when it is not installed. */
  nginx: string | null
  reference: MachineReference
  scenarios: Record<string, ScenarioSummary | null>
  ratios: GatewayAloneRatios
}

export interface BenchResults {
  /** Each front process in front of the fixed upstream, on this process's Node. */
  gateway_alone: GatewayAlone
  /** The same group on the image's Node 24; null when that pass did not run (`--node24 no`, `--quick`). */
  gateway_alone_node24: GatewayAlone | null
  /** kigo's own share of a gateway's CPU under one gateway-alone scenario (bench/profile.ts); null when no profile was taken. */
  profile: { scenario: string; node: string; samples: number; kigo_percent: number; kigo_files: Array<{ file: string; percent: number }>; file: string } | null
  /** Issue 18 (2): statuses/show of the core against the minimal fastify + pg anchor. */
  core: {
    pool_size: number
    scenarios: Record<string, ScenarioSummary>
    /**
     * required_vs_anchor: the anchor with the checks the core cannot skip (anchor.ts), the
     * floor under show_vs_anchor; show_vs_required: the share of the distance that is the core's own.
     * required_identified_vs_anonymous: the same floor's signed viewer over its anonymous
     * request, the floor under show_identified_vs_anonymous; show_identified_vs_required:
     * the core's signed viewer over the floor's.
     */
    ratios: {
      show_vs_anchor: Ratio
      show_identified_vs_anonymous: Ratio
      required_vs_anchor: Ratio
      show_vs_required: Ratio
      required_identified_vs_anonymous: Ratio
      show_identified_vs_required: Ratio
    }
  }
  /** Issue 18 (4): at half the bare proxy's saturation rate, p99 over the bare proxy's p99 in the same pass. */
  latency: {
    /** The median of the rounds' rates, each half the bare proxy's saturation measured just before its round. */
    fixed_rate_rps: number
    round_rates_rps: number[]
    scenarios: Record<string, ScenarioSummary>
    /** required_oauth_vs_bare_proxy: the required-work proxy's OAuth, the floor under oauth_vs_bare_proxy. */
    p99_ratio: { anonymous_vs_bare_proxy: Ratio; basic_vs_bare_proxy: Ratio; wsse_vs_bare_proxy: Ratio; oauth_vs_bare_proxy: Ratio; required_oauth_vs_bare_proxy: Ratio }
  }
  /** Issue 18 (5): `npm start` on an existing data directory. */
  /** Null when the embedded group did not run (`--only`). */
  embedded: { start_s: number; start_cpu_s: number | null; idle_rss_mb: number; loaded_rss_mb: number } | null
  /** The whole system (core, bare proxy and gateway on PostgreSQL and Redis), kept. */
  scenarios: Record<string, ScenarioSummary>
  ratios: Ratios & TimelineRatios
  /** Null when the whole system's fixed-rate scenarios did not run (`--only`). */
  added_p99_ms: number | null
  /** Max RSS of the gateway process over the gateway scenarios. */
  gateway_rss_mb: number | null
  fixed_rate_rps: number
  /** Each judged ratio's middle half of passes (ratioSpread), by the ratio's place in this file. */
  spread: Record<JudgedFigure, Spread>
  node: string
  cpus: number
  settings: { mode: 'quick' | 'full'; rounds: number; duration_s: number; slice_s: number; warmup_s: number; paced_warmup_s: number; connections: number; entries: number; timeline_entries: number }
}

export interface Target {
  name: string
  value: number | null
  /** Human-readable bound. */
  bound: string
  unit: string
  /**
   * The same figure, in the same run, for the floor under it: the required-work proxy or
   * the anchor with the required checks (anchor.ts), which do only the work no gateway or
   * core can skip. Null when the figure has no floor (the footprint, the whole system) or
   * a partial run did not measure it.
   */
  floor: number | null
  /** The middle half of the figure's passes in this run (ratioSpread); null for a figure that is not a paired ratio, or with fewer than four passes. */
  spread: Spread
  /**
   * 'met'; 'not met'; 'out of reach' when not met and the floor misses the bound too, so
   * that the run itself measures that only less work than required would meet it; 'not
   * measured' when a partial run (--only) left it out.
   */
  verdict: 'met' | 'not met' | 'out of reach' | 'not measured'
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
export function pairedRatio(windows: Record<string, WindowMeasurement[]>, a: string, b: string, field: 'rps' | 'p99Ms' = 'rps'): Ratio {
  const perPass = passRatios(windows, a, b, field)
  return perPass.length ? round(median(perPass), 3) : null
}

/** Each pass's ratio of `a` over `b` (see pairedRatio), in the passes' order. */
function passRatios(windows: Record<string, WindowMeasurement[]>, a: string, b: string, field: 'rps' | 'p99Ms'): number[] {
  const as = windows[a] ?? []
  const bs = windows[b] ?? []
  return as.slice(0, bs.length).map((w, i) => (bs[i]![field] > 0 ? w[field] / bs[i]![field] : 0))
}

/**
 * The middle half of the passes' ratios (their first and third quartiles, interpolated),
 * beside the median pairedRatio gives: how much one pass's ratio differs from another's
 * in this run. A bound inside it is a verdict the next run may turn over. Null with fewer
 * than four passes (a quick run has one).
 */
export function ratioSpread(windows: Record<string, WindowMeasurement[]>, a: string, b: string, field: 'rps' | 'p99Ms' = 'rps'): Spread {
  const sorted = passRatios(windows, a, b, field).sort((x, y) => x - y)
  if (sorted.length < 4) return null
  const quartile = (q: number) => {
    const at = (sorted.length - 1) * q
    const below = Math.floor(at)
    return sorted[below]! + (sorted[Math.min(below + 1, sorted.length - 1)]! - sorted[below]!) * (at - below)
  }
  return [round(quartile(0.25), 3), round(quartile(0.75), 3)]
}

export function ratios(windows: Record<string, WindowMeasurement[]>): Ratios {
  return {
    anonymous_vs_bare_proxy: judgedRatio(windows, 'ratios.anonymous_vs_bare_proxy'),
    oauth_vs_anonymous: judgedRatio(windows, 'ratios.oauth_vs_anonymous'),
    basic_vs_anonymous: judgedRatio(windows, 'ratios.basic_vs_anonymous'),
    wsse_vs_anonymous: judgedRatio(windows, 'ratios.wsse_vs_anonymous'),
  }
}

/** Issue 18's targets, then docs/performance.md#how-it-measures's for the whole system, each with its measured value. */
/** " at N rps" for a fixed-rate figure; nothing when the rate was not measured (a partial run). */
function atRate(rps: number): string {
  return rps > 0 ? ` at ${Math.round(rps)} rps` : ''
}

export function targets(r: BenchResults): Target[] {
  const target = (name: string, value: number | null, bound: string, holds: (v: number) => boolean, unit: string, floor: number | null, spread: Spread): Target => {
    const verdict = value === null ? 'not measured' : holds(value) ? 'met' : floor !== null && !holds(floor) ? 'out of reach' : 'not met'
    return { name, value, bound, unit, floor, spread, verdict }
  }
  const atLeast = (name: string, value: number | null, min: number, floor: number | null = null, spread: Spread = null) => target(name, value, `>= ${min.toFixed(2)}`, (v) => v >= min, '', floor, spread)
  const atMost = (name: string, value: number | null, max: number, unit: string, floor: number | null = null, spread: Spread = null) => target(name, value, `<= ${max}${unit}`, (v) => v <= max, unit, floor, spread)
  const a = r.gateway_alone.ratios
  const c = r.core.ratios
  const sp = r.spread
  return [
    atLeast('gateway alone: anonymous / bare proxy rps', a.anonymous_vs_bare_proxy, 0.95, a.required_anonymous_vs_bare_proxy, sp['gateway_alone.ratios.anonymous_vs_bare_proxy']),
    atLeast('gateway alone: basic / bare proxy rps', a.basic_vs_bare_proxy, 0.9, a.required_basic_vs_bare_proxy, sp['gateway_alone.ratios.basic_vs_bare_proxy']),
    atLeast('gateway alone: wsse / bare proxy rps', a.wsse_vs_bare_proxy, 0.8, a.required_wsse_vs_bare_proxy, sp['gateway_alone.ratios.wsse_vs_bare_proxy']),
    atLeast('gateway alone: oauth / bare proxy rps', a.oauth_vs_bare_proxy, 0.8, a.required_oauth_vs_bare_proxy, sp['gateway_alone.ratios.oauth_vs_bare_proxy']),
    atLeast('gateway alone: oauth2 / oauth rps (Bearer against OAuth 1.0a)', a.oauth2_vs_oauth, 1, null, sp['gateway_alone.ratios.oauth2_vs_oauth']),
    atLeast('gateway alone: anonymous / its floor rps', a.anonymous_vs_required, 0.9),
    atLeast('gateway alone: basic / its floor rps', a.basic_vs_required, 0.9),
    atLeast(`gateway alone: OpenID Connect served / never served (${r.gateway_alone.node})`, a.anonymous_vs_no_oidc, 0.98, null, sp['gateway_alone.ratios.anonymous_vs_no_oidc']),
    ...(r.gateway_alone_node24
      ? [
          atLeast(`gateway alone: anonymous / bare proxy rps (${r.gateway_alone_node24.node})`, r.gateway_alone_node24.ratios.anonymous_vs_bare_proxy, 0.95, r.gateway_alone_node24.ratios.required_anonymous_vs_bare_proxy),
          atLeast(`gateway alone: OpenID Connect served / never served (${r.gateway_alone_node24.node})`, r.gateway_alone_node24.ratios.anonymous_vs_no_oidc, 0.98),
        ]
      : []),
    ...(r.profile ? [atMost(`kigo's own code in the gateway's CPU (${r.profile.scenario})`, r.profile.kigo_percent, 5, ' %')] : []),
    atLeast('core show / anchor rps', c.show_vs_anchor, 0.9, c.required_vs_anchor, sp['core.ratios.show_vs_anchor']),
    atLeast('core show identified / anonymous rps', c.show_identified_vs_anonymous, 0.9, c.required_identified_vs_anonymous, sp['core.ratios.show_identified_vs_anonymous']),
    atMost(`oauth p99 / bare proxy p99${atRate(r.latency.fixed_rate_rps)}`, r.latency.p99_ratio.oauth_vs_bare_proxy, 1.5, '', r.latency.p99_ratio.required_oauth_vs_bare_proxy, sp['latency.p99_ratio.oauth_vs_bare_proxy']),
    atMost('embedded idle RSS', r.embedded?.idle_rss_mb ?? null, 200, ' MB'),
    atMost('embedded npm start to ready', r.embedded?.start_s ?? null, 3, ' s'),
    atLeast('whole system: gateway_anonymous / bare_proxy rps', r.ratios.anonymous_vs_bare_proxy, 0.9, null, sp['ratios.anonymous_vs_bare_proxy']),
    atLeast('whole system: gateway_oauth / gateway_anonymous rps', r.ratios.oauth_vs_anonymous, 0.85, null, sp['ratios.oauth_vs_anonymous']),
    atLeast('whole system: gateway_basic / gateway_anonymous rps', r.ratios.basic_vs_anonymous, 0.95, null, sp['ratios.basic_vs_anonymous']),
    atLeast('whole system: gateway_wsse / gateway_anonymous rps', r.ratios.wsse_vs_anonymous, 0.85, null, sp['ratios.wsse_vs_anonymous']),
    atMost(`whole system: added p99${atRate(r.fixed_rate_rps)} (oauth - core)`, r.added_p99_ms, 2, ' ms'),
    atMost('whole system: gateway RSS under load', r.gateway_rss_mb, 200, ' MB'),
  ]
}

/** The line under the targets: how many are met, and how many the run shows out of reach. */
export function targetsLine(list: Target[]): string {
  const count = (v: Target['verdict']) => list.filter((t) => t.verdict === v).length
  const reach = count('out of reach')
  return `targets met: ${count('met')}/${list.length}${reach > 0 ? `; out of reach in this run (the floor misses the bound too): ${reach}` : ''}`
}

function table(header: string[], rows: string[][], rightAligned: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (rightAligned[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

const fmt = (v: number | null, digits: number) => (v === null ? '-' : v.toFixed(digits))

function scenarioTable(scenarios: Record<string, ScenarioSummary | null>): string {
  const rows = Object.entries(scenarios).map(([name, s]) =>
    s === null || s.windows === 0
      ? // null: nginx not installed; no windows: left out of a partial run (--only).
        [name, s === null ? 'absent' : 'not run', '-', '-', '-', '-', '-', '-', '-', '-', '-', '-', '-']
      : [
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
        ],
  )
  return table(
    ['scenario', 'rps', 'p50 ms', 'p99 ms', 'rss MB', 'non-2xx', '5xx', 'errors', 'core µs/req', 'front µs/req', 'pg µs/req', 'redis µs/req', 'machine µs/req'],
    rows,
    [false, true, true, true, true, true, true, true, true, true, true, true, true],
  )
}

/** The required-work proxy's ratios (bench/required-work-proxy.ts), one line per credential kind. */
function requiredWorkLine(a: GatewayAloneRatios): string {
  const kinds = [
    ['anonymous', a.required_anonymous_vs_bare_proxy, a.anonymous_vs_required],
    ['Basic', a.required_basic_vs_bare_proxy, a.basic_vs_required],
    ['WSSE', a.required_wsse_vs_bare_proxy, a.wsse_vs_required],
    ['OAuth', a.required_oauth_vs_bare_proxy, a.oauth_vs_required],
    ['OAuth 2.0', a.required_oauth2_vs_bare_proxy, a.oauth2_vs_required],
  ] as const
  return `required work only (rps over the bare proxy; the gateway's over it): ${kinds.map(([k, floor, gw]) => `${k} ${fmt(floor, 3)}, gateway ${fmt(gw, 3)}`).join('; ')}`
}

/** The gateway-alone group's table and lines, with the machine reference its ratios were measured at. */
function aloneSection(title: string, g: GatewayAlone): string[] {
  const ref = g.reference
  const load = ref.load_average ? `${ref.load_average.start.toFixed(2)} to ${ref.load_average.end.toFixed(2)}` : '-'
  return [
    `${title}, ${g.node}, in front of a fixed ~700-byte upstream (front µs/req: the proxy's own CPU); every gateway but no_oidc has served OpenID Connect${g.nginx ? `; ${g.nginx}` : '; nginx is not installed (null)'}`,
    scenarioTable(g.scenarios),
    `machine reference: bare proxy ${fmt(ref.bare_proxy_cpu_us, 0)} µs/req, nginx ${fmt(ref.nginx_cpu_us, 0)} µs/req, load average ${load}`,
    requiredWorkLine(g.ratios),
    `OpenID Connect served / never served (anonymous rps): ${fmt(g.ratios.anonymous_vs_no_oidc, 3)}`,
    g.nginx ? `over nginx (rps, at the reference above): bare proxy ${fmt(g.ratios.bare_proxy_vs_nginx, 3)}, gateway anonymous ${fmt(g.ratios.anonymous_vs_nginx, 3)}` : 'over nginx: nginx is not installed',
    '',
  ]
}

/** Each verdict as the targets table prints it. */
const verdictWords: Record<Target['verdict'], string> = { met: 'met', 'not met': 'NOT met', 'out of reach': 'out of reach: the floor misses it too', 'not measured': 'not measured' }

/** The report as printed; `judged`, the run's targets when the caller has judged them already. */
export function formatReport(r: BenchResults, judged: Target[] = targets(r)): string {
  const value = (v: number | null, unit: string) => (v === null ? '-' : `${unit === '' ? v.toFixed(3) : v.toFixed(2)}${unit}`)
  const spread = (v: Spread) => (v === null ? '-' : `${v[0].toFixed(3)}-${v[1].toFixed(3)}`)
  const targetRows = judged.map((t) => [t.name, value(t.value, t.unit), spread(t.spread), t.bound, value(t.floor, t.unit), verdictWords[t.verdict]])
  const targetTable = table(['target', 'measured', 'passes p25-p75', 'bound', 'floor', ''], targetRows, [false, true, true, false, true, false])
  const s = r.settings
  return [
    `kigo benchmark (${s.mode}): node ${r.node}, ${r.cpus} CPUs, ${s.rounds} round(s) of ${s.duration_s} s per scenario (interleaved slices of ${s.slice_s} s) after ${s.warmup_s} s warm-up (fixed-rate windows: ${s.paced_warmup_s} s at their rate, not counted), ${s.connections} connections, ${s.entries} entries; medians over slices`,
    '',
    ...aloneSection('1. gateway alone', r.gateway_alone),
    ...(r.gateway_alone_node24 ? aloneSection('1b. gateway alone on the image\'s Node', r.gateway_alone_node24) : ['1b. gateway alone on the image\'s Node: not run', '']),
    r.profile
      ? `profile of ${r.profile.scenario} on ${r.profile.node}: kigo's own code ${r.profile.kigo_percent.toFixed(2)} % of ${r.profile.samples} samples (${r.profile.kigo_files.map((f) => `${f.file} ${f.percent.toFixed(2)} %`).join(', ')}); ${r.profile.file}`
      : 'profile: not taken',
    '',
    `2. core statuses/show against the minimal fastify + pg anchor (pool of ${r.core.pool_size})`,
    scenarioTable(r.core.scenarios),
    `required checks only (rps over the anchor): ${fmt(r.core.ratios.required_vs_anchor, 3)}; the core's over it: ${fmt(r.core.ratios.show_vs_required, 3)}`,
    `required checks only, signed viewer over anonymous: ${fmt(r.core.ratios.required_identified_vs_anonymous, 3)}; the core's signed viewer over the floor's: ${fmt(r.core.ratios.show_identified_vs_required, 3)}`,
    '',
    `3. whole system (public timeline, count=20, over ${s.timeline_entries} entries; over statuses/show: anonymous ${fmt(r.ratios.public_timeline_vs_show, 3)}, OAuth ${fmt(r.ratios.public_timeline_oauth_vs_show_oauth, 3)})`,
    scenarioTable(r.scenarios),
    '',
    `4. latency${atRate(r.latency.fixed_rate_rps)} (half the bare proxy's saturation), gateway alone`,
    scenarioTable(r.latency.scenarios),
    `p99 over the bare proxy's: OAuth ${fmt(r.latency.p99_ratio.oauth_vs_bare_proxy, 2)}, the required work alone (OAuth) ${fmt(r.latency.p99_ratio.required_oauth_vs_bare_proxy, 2)}`,
    '',
    r.embedded
      ? `5. embedded: npm start to ready ${r.embedded.start_s.toFixed(2)} s (the app's CPU until then ${r.embedded.start_cpu_s?.toFixed(2) ?? '-'} s), idle RSS ${r.embedded.idle_rss_mb.toFixed(1)} MB, after 1,000 mixed requests ${r.embedded.loaded_rss_mb.toFixed(1)} MB`
      : '5. embedded: not run',
    '',
    targetTable,
  ].join('\n')
}
