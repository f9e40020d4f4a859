// Microbenchmark: what the throttle costs a verified Basic or WSSE request (docs/operations.md#throttling):
// the verdict read from the local view (check) and the success (succeeded, written at most
// once a minute), as the gateway stacks the rules over Redis (create.ts) with every key
// already seen clear. 50 clients take turns, each address a new string per request, as a
// socket gives it. `node dist/bench/micro/throttle-keys.js [BASE]`: BASE, the dist/
// directory of another build (such as the commit before a change), is timed in turn with
// this one. Prints µs per request, the median of 7 runs of 300,000.
import * as here from '../../src/gateway/throttle/attempts.js'
import * as hereCached from '../../src/gateway/throttle/cached.js'
import type { FailureThrottle } from '../../src/gateway/throttle/types.js'
import { fromBuild, printTimedInTurn } from './builds.js'

type Build = { attempts: typeof here; cached: typeof hereCached }

const clear: FailureThrottle = { check: async () => 0, recordFailure: async () => undefined, reset: async () => undefined, close: async () => undefined }
const users = Array.from({ length: 50 }, (_, i) => `user${i}`)
const perRun = 300_000
const runs = 7

async function timer({ attempts, cached }: Build): Promise<() => number> {
  const rule = () => new cached.CachedFailureThrottle(clear, { clearMs: 1e9 })
  // A build from before KnownPairs took the known rule as a plain FailureThrottle.
  const known = ('KnownPairs' in attempts ? new attempts.KnownPairs(rule()) : rule()) as here.KnownPairs
  const throttle = new attempts.RuleAttemptThrottle({ pair: rule(), address: rule(), user: rule(), known })
  const attempt = (i: number) => ({ realm: 'api' as const, user: users[i % 50]!, ip: ['10.0.0.', i % 50].join('') })
  for (let i = 0; i < 50; i++) {
    await throttle.check(attempt(i))
    await throttle.succeeded(attempt(i))
  }
  let sink: unknown
  const one = (i: number) => {
    const a = attempt(i)
    sink = throttle.check(a)
    sink = throttle.succeeded(a)
  }
  for (let i = 0; i < 50_000; i++) one(i)
  return () => {
    const started = process.hrtime.bigint()
    for (let i = 0; i < perRun; i++) one(i)
    if (sink === undefined) throw new Error('no verdict')
    return Number(process.hrtime.bigint() - started) / perRun / 1000
  }
}

const load = async (dist: string): Promise<Build> => ({
  attempts: await fromBuild<typeof here>(dist, 'src/gateway/throttle/attempts.js'),
  cached: await fromBuild<typeof hereCached>(dist, 'src/gateway/throttle/cached.js'),
})

const builds: Array<[string, Record<string, () => number>]> = [['this build', { 'check + succeeded': await timer({ attempts: here, cached: hereCached }) }]]
if (process.argv[2]) builds.push(['base', { 'check + succeeded': await timer(await load(process.argv[2])) }])
printTimedInTurn(builds, runs, 'request')
