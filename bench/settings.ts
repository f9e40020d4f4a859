// The benchmark's settings from its command line, and the order its timed slices run in.
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { scenarios, type AnyScenario } from './scenarios.js'

export interface Settings {
  mode: 'quick' | 'full'
  rounds: number
  durationSeconds: number
  /**
   * Each scenario's time in a round is split into slices of this length, and the slices of
   * all scenarios alternate (A B C … A B C …): this machine's speed drifts by a fifth
   * over tens of seconds, so scenarios compared side by side must run close together.
   */
  sliceSeconds: number
  warmupSeconds: number
  /** Each latency scenario's time per round at the fixed rate. */
  latencySeconds: number
  /**
   * Before each fixed-rate window, seconds at the same rate on the same connections that
   * are not counted: the steady state's p99, not the start's (paced-load.ts).
   */
  pacedWarmupSeconds: number
  connections: number
  entries: number
  /** Entries in the store for the timeline scenarios (docs/performance.md#the-groups-and-their-keys, the `timeline` scenarios), most of them inserted in bulk (timeline-seed.ts). */
  timelineEntries: number
  tokens: number
  embeddedSettleMs: number
  out: string
  /**
   * A scenario of the gateway alone whose load a CPU profile of a gateway of its own is taken
   * under (`--profile SCENARIO`); a full run profiles `alone_anonymous`.
   */
  profile?: string
  /** Whether the gateway-alone group runs again on the image's Node 24 (node24.ts). */
  node24: boolean
  /**
   * Run only these groups (embedded, alone, latency, core, whole) or scenarios
   * (profiling); ratios need all of a group.
   */
  only?: string[]
  /** The `scale` group's sizes (`--only scale`; docs/performance.md#scale). */
  scaleSizes: Array<'S' | 'M' | 'L'>
  /** Keep the scale group's databases, and reuse those seeded at the same version. */
  keepScaleData: boolean
  /** Seconds each operation of the scale group is timed at each size (--duration; 20). */
  scaleSeconds: number
  /** The scale group's operations to time (--scale-ops); null for all. */
  scaleOps: string[] | null
}

/** The full run's defaults, for the settings below and for --help. */
const fullDefaults = { rounds: 3, duration: 10, slice: 2, connections: 32, out: 'bench/results.json' } as const

/** The command line, in --help's order: each option's value name ('' for a switch) and what it does. */
const commandLine = {
  quick: { value: '', help: "one round of 2 s per scenario (the test suite's run)" },
  rounds: { value: 'N', help: `rounds per scenario (${fullDefaults.rounds})` },
  duration: { value: 'S', help: `seconds per scenario and round (${fullDefaults.duration})` },
  slice: { value: 'S', help: `seconds per interleaved slice; divides --duration (${fullDefaults.slice})` },
  connections: { value: 'N', help: `client connections of the closed-loop load (${fullDefaults.connections})` },
  only: { value: 'LIST', help: 'groups (embedded, alone, latency, core, whole; scale alone) or scenario names, comma-separated' },
  'scale-sizes': { value: 'LIST', help: 'the scale group\'s store sizes, of S, M, L (S,M,L)' },
  'scale-ops': { value: 'LIST', help: 'time only these operations of the scale group (all)' },
  'keep-scale-data': { value: '', help: 'keep the scale group\'s databases kigo_scale_*, and reuse them when seeded at the same version' },
  profile: { value: 'SCENARIO', help: "a CPU profile of a gateway under that gateway-alone scenario's load, and kigo's own share of it" },
  node24: { value: 'yes|no', help: "the gateway-alone group again on the image's Node 24 (yes; no with --quick)" },
  out: { value: 'FILE', help: `results JSON (${fullDefaults.out})` },
  help: { value: '', help: 'this text' },
} as const

type CommandLine = typeof commandLine
const parseOptions = Object.fromEntries(Object.entries(commandLine).map(([name, o]) => [name, { type: o.value === '' ? 'boolean' : 'string' }])) as {
  [K in keyof CommandLine]: { type: CommandLine[K]['value'] extends '' ? 'boolean' : 'string' }
}

/** What `npm run bench -- --help` prints (docs/performance.md#the-groups-and-their-keys says what each group measures). */
export const usage = ['usage: npm run bench -- [options]', ...Object.entries(commandLine).map(([name, o]) => `  ${`--${name} ${o.value}`.padEnd(19)}${o.help}`)].join('\n')

/** The command line's settings; null when it asked for --help. Throws on an unknown or bad option. */
export function settingsFrom(argv: string[]): Settings | null {
  const { values } = parseArgs({ args: argv, options: parseOptions })
  if (values.help === true) return null
  const quick = values.quick === true
  const int = (name: string, v: string | undefined, fallback: number) => {
    if (v === undefined) return fallback
    if (!/^[1-9][0-9]*$/.test(v)) throw new Error(`--${name}: expected a positive whole number, got ${JSON.stringify(v)}`)
    return Number(v)
  }
  const yesNo = (name: string, v: string | undefined, fallback: boolean) => {
    if (v === undefined) return fallback
    if (v !== 'yes' && v !== 'no') throw new Error(`--${name}: expected yes or no, got ${JSON.stringify(v)}`)
    return v === 'yes'
  }
  const durationSeconds = int('duration', values.duration, quick ? 2 : fullDefaults.duration)
  const only = values.only?.split(',').map((n) => n.trim())
  if (only?.includes('scale') && only.length > 1) throw new Error('--only scale: the scale group runs alone')
  const scaleSizes = (values['scale-sizes'] ?? 'S,M,L').split(',').map((n) => n.trim().toUpperCase())
  const badSize = scaleSizes.find((n) => !['S', 'M', 'L'].includes(n))
  if (badSize !== undefined) throw new Error(`--scale-sizes: expected sizes of S, M, L, got ${JSON.stringify(badSize)}`)
  if (values.profile !== undefined && scenarios[values.profile as AnyScenario]?.target !== 'alone_gateway') {
    throw new Error(`--profile: expected a scenario of the gateway alone (alone_anonymous, alone_basic, alone_wsse, alone_oauth, alone_oauth2), got ${JSON.stringify(values.profile)}`)
  }
  const sliceSeconds = Math.min(durationSeconds, int('slice', values.slice, quick ? durationSeconds : fullDefaults.slice))
  if (durationSeconds % sliceSeconds !== 0) throw new Error(`--slice ${sliceSeconds} must divide --duration ${durationSeconds}`)
  return {
    mode: quick ? 'quick' : 'full',
    rounds: int('rounds', values.rounds, quick ? 1 : fullDefaults.rounds),
    durationSeconds,
    sliceSeconds,
    warmupSeconds: quick ? 1 : 3,
    latencySeconds: quick ? 2 : 5,
    pacedWarmupSeconds: quick ? 0.5 : 2,
    connections: int('connections', values.connections, fullDefaults.connections),
    entries: quick ? 200 : 3000,
    timelineEntries: quick ? 2000 : 100_000,
    tokens: quick ? 2 : 4,
    // Idle means after V8's memory reducer has had its first pass (about 8 s after the
    // start's allocations end); before it, the figure is the start's garbage, and moves by tens of MB.
    embeddedSettleMs: quick ? 2000 : 15_000,
    out: resolve(values.out ?? fullDefaults.out),
    ...(values.profile !== undefined ? { profile: values.profile } : quick || only ? {} : { profile: 'alone_anonymous' }),
    node24: yesNo('node24', values.node24, !quick),
    ...(only ? { only } : {}),
    scaleSizes: scaleSizes as Settings['scaleSizes'],
    keepScaleData: values['keep-scale-data'] === true,
    // 20 s at 200 requests a second: a p99 of 4,000 answers, not of a few slow ones.
    scaleSeconds: int('duration', values.duration, 20),
    scaleOps: values['scale-ops'] === undefined ? null : values['scale-ops'].split(',').map((n) => n.trim()).filter((n) => n !== ''),
  }
}

/**
 * Where a full run keeps a copy of its results beside the others (`bench/results/`, named
 * by the time it finished: `2026-11-26T21-18-52Z.json`), so that the figures a change
 * quotes can be committed with it; null for a `--quick` or `--only` run, which measures
 * too little to keep.
 */
export function archivePath(settings: Pick<Settings, 'mode' | 'only'>, root: string, finished: Date): string | null {
  if (settings.mode !== 'full' || settings.only !== undefined) return null
  const stamp = finished.toISOString().replace(/\.[0-9]{3}Z$/, 'Z').replaceAll(':', '-')
  return resolve(root, 'bench', 'results', `${stamp}.json`)
}

/**
 * The timed slices in order: `rounds` × `slices` passes, each running every scenario once.
 * Each pass starts one scenario later than the one before, so no scenario always follows
 * the same one, and the two sides of every ratio run seconds apart.
 */
export function passes<T>(scenarios: readonly T[], rounds: number, slices: number): T[][] {
  return Array.from({ length: rounds * slices }, (_, cycle) => scenarios.map((_, i) => scenarios[(i + cycle) % scenarios.length]!))
}
