// `npm run bench -- --profile SCENARIO` (docs/performance.md#running-it): a gateway of its
// own, started like the gateway-alone group's (production flags, OpenID Connect served
// first) with V8's CPU profiler on, under that scenario's load for one window; then the
// share of the profile's CPU samples taken in kigo's own code (dist/src/), over the
// window only: the process's start, the sign-in and its stop are left out.
import { readdirSync, readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface ProfileShare {
  scenario: string
  node: string
  /** Samples taken in the window, idle ones left out. */
  samples: number
  /** Share of those samples in kigo's own code (dist/src/), in percent. */
  kigo_percent: number
  /** kigo's own files by their share, in percent, the largest first (at most ten). */
  kigo_files: Array<{ file: string; percent: number }>
  /** The profile's file name (in the directory the run printed). */
  file: string
}

/** Where a frame's code is, relative to dist/src/, or null when it is not kigo's own. */
export function kigoFile(url: string): string | null {
  const at = url.indexOf('/dist/src/')
  return at < 0 || url.includes('/node_modules/') ? null : url.slice(at + '/dist/src/'.length)
}

/**
 * kigo's share of a profile's samples between `fromUs` and `toUs` (the profiler's clock,
 * the monotonic one process.hrtime reads, in µs): self time only, idle samples left out.
 */
export function kigoShare(profile: CpuProfile, fromUs: number, toUs: number): { samples: number; percent: number; files: Array<{ file: string; percent: number }> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const perFile = new Map<string, number>()
  let at = profile.startTime
  let counted = 0
  let own = 0
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0
    if (at < fromUs || at > toUs) continue
    const frame = byId.get(profile.samples[i]!)?.callFrame
    if (!frame || frame.functionName === '(idle)') continue
    counted++
    const file = kigoFile(frame.url)
    if (file === null) continue
    own++
    perFile.set(file, (perFile.get(file) ?? 0) + 1)
  }
  const percent = (n: number) => (counted === 0 ? 0 : Number(((100 * n) / counted).toFixed(2)))
  const files = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([file, n]) => ({ file, percent: percent(n) }))
  return { samples: counted, percent: percent(own), files }
}

/** The one profile a process wrote into `dir` (node --cpu-prof-dir), parsed. */
export function readProfile(dir: string): { file: string; profile: CpuProfile } {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
  if (files.length !== 1) throw new Error(`expected one CPU profile in ${dir}, found ${files.length}`)
  return { file: files[0]!, profile: JSON.parse(readFileSync(`${dir}/${files[0]}`, 'utf8')) as CpuProfile }
}
