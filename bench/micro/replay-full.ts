// Microbenchmark: what a claim costs the in-process replay cache when it is full of live
// nonces (docs/security.md#replay-cache-bounds), the state a flood of clients at their
// quota leaves it in. Each timed claim is a new nonce of a new client and is refused
// (503); the cache must find that nothing can be evicted without looking at every entry.
// `node dist/bench/micro/replay-full.js [BASE]`: BASE, the dist/ directory of another
// build (such as the commit before a change), is timed in turn with this one. Prints µs
// per refused claim, the median of 3 runs of 200, over 1,000,000 live entries.
import * as here from '../../src/gateway/replay/memory.js'
import { fromBuild, printTimedInTurn } from './builds.js'

type Build = typeof here

const entries = 1_000_000
const perRun = 200
const runs = 3

async function timer(build: Build): Promise<() => number> {
  const cache = new build.MemoryReplayCache({ maxEntries: entries, perClientMax: entries, sweepIntervalMs: 3_600_000 })
  for (let i = 0; i < entries; i++) await cache.claim(`filler:${i}`, 601, 'filler')
  let next = 0
  return () => {
    let refused = 0
    const started = process.hrtime.bigint()
    for (let i = 0; i < perRun; i++) {
      // claim is async but decides synchronously; its rejection is counted, not awaited.
      cache.claim(`new:${next++}`, 601, `client${next}`).catch(() => undefined)
      refused++
    }
    const µs = Number(process.hrtime.bigint() - started) / perRun / 1000
    if (cache.size !== entries || refused !== perRun) throw new Error(`the cache took a claim: ${cache.size}`)
    return µs
  }
}

const base = process.argv[2]
const builds: Array<[string, Build]> = [['this', here]]
if (base) builds.push([base, await fromBuild<Build>(base, 'src/gateway/replay/memory.js')])
const timers: Array<[string, Record<string, () => number>]> = []
for (const [name, build] of builds) timers.push([name, { refusal: await timer(build) }])
printTimedInTurn(timers, runs, 'refused claim')
