// Microbenchmark: the signed identity (docs/gateway.md#forwarding) at both ends of an identified request:
// the gateway's signIdentity and the core's verifyIdentity, for a Basic identity on a
// statuses/show request. `node dist/bench/micro/identity-signature.js [BASE]`: BASE, the
// dist/ directory of another build (such as the commit before a change), is timed in turn
// with this one. Prints µs per request for each end, the median of 7 runs of 200,000.
import { randomBytes, randomUUID } from 'node:crypto'
import * as here from '../../src/common/identity.js'
import { fromBuild, printTimedInTurn } from './builds.js'

const perRun = 200_000
const runs = 7
const secretKey = randomBytes(32).toString('base64')
const request = { method: 'GET', url: '/api/statuses/show/1234567.json', host: 'localhost:8080', requestId: randomUUID(), operation: 'statuses/show', bodySha256: '' }
const identity: here.Identity = { user: 'alice', userName: 'Alice Liddell', authMethod: 'basic', consumer: '', scopes: [] }

function timers(build: typeof here): { sign: () => number; verify: () => number } {
  const key = build.identityKey(secretKey)
  const headers = build.signIdentity(key, request, identity)
  if (!build.verifyIdentity(key, headers, request, 60).ok) throw new Error('the signature does not verify')
  let sink: unknown
  const time = (one: () => unknown) => () => {
    const started = process.hrtime.bigint()
    for (let i = 0; i < perRun; i++) sink = one()
    if (sink === undefined) throw new Error('no result')
    return Number(process.hrtime.bigint() - started) / perRun / 1000
  }
  const sign = time(() => build.signIdentity(key, request, identity))
  const verify = time(() => build.verifyIdentity(key, headers, request, 60))
  sign()
  verify()
  return { sign, verify }
}

const builds: Array<[string, Record<string, () => number>]> = [['this build', timers(here)]]
if (process.argv[2]) builds.push(['base', timers(await fromBuild<typeof here>(process.argv[2], 'src/common/identity.js'))])
printTimedInTurn(builds, runs, 'request')
