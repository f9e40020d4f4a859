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
  const times = builds.map(([, timers]) => new Map(Object.keys(timers).map((name) => [name, [] as number[]])))
  for (let r = 0; r < runs; r++) {
    builds.forEach(([, timers], b) => {
      for (const [name, time] of Object.entries(timers)) times[b]!.get(name)!.push(time())
    })
  }
  builds.forEach(([build], b) => {
    const medians = [...times[b]!].map(([name, values]) => `${name} ${median(values).toFixed(3)} µs`)
    console.log(`${build.padEnd(10)} ${medians.join(', ')} per ${unit}`)
  })
}
