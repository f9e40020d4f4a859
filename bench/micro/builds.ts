// What the micro-benchmarks share to time this build against another one (BASE: the dist/
// directory of, say, the commit before a change) within one run.
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { median } from '../report.js'

/** A module of the build in `dist`, by its path there (`src/common/identity.js`). */
export async function fromBuild<T>(dist: string, path: string): Promise<T> {
  return (await import(pathToFileURL(join(resolve(dist), path)).href)) as T
}

/**
 * Runs every build's timers in turn, `runs` times over, so that the machine's drift falls
 * on all alike; each timer returns µs per operation. Prints each timer's median by build.
 */
export function printTimedInTurn(builds: Array<[string, Record<string, () => number>]>, runs: number, unit: string): void {
  const times = builds.map(([name, timers]) => [name, Object.keys(timers), new Map(Object.keys(timers).map((t) => [t, [] as number[]]))] as const)
  for (let r = 0; r < runs; r++) for (const [i, [, timers]] of builds.entries()) for (const [t, time] of Object.entries(timers)) times[i]![2].get(t)!.push(time())
  for (const [name, names, values] of times) console.log(`${name.padEnd(10)} ${names.map((t) => `${t} ${median(values.get(t)!).toFixed(3)} µs`).join(', ')} per ${unit}`)
}
