// Microbenchmark: the gateway's CPU per request on statuses/show against the bare
// reply-from proxy (bench/bare-proxy.ts) and the required-work proxy
// (bench/required-work-proxy.ts, the floor of the gateway-alone figures), all in this
// process in front of the fixed upstream (bench/fixed-upstream.ts, its own process),
// through `inject` (no client sockets): what the gateway's own request handling costs
// beyond forwarding, and beyond the work no gateway can skip. Rounds alternate between
// them so that the machine's drift hits all alike.
//
// `node dist/bench/micro/gateway-overhead.js`
// Environment: N requests per round (default 20000), R rounds (default 6), C concurrent
// requests (default 16), CREDENTIAL (`none`, the default; `basic`: a user made through
// the operator API as bench/seed.ts makes it, its API password on every request; `wsse`: the same user, a freshly
// signed X-WSSE on every request, its signing counted alike for every gateway; `oauth`: an
// application and access token of that user, every request freshly signed with HMAC-SHA1),
// ONLY (`bare`, `required`, `gateway` or `base`: one of them alone, such as under
// --cpu-prof), BASE (the dist/ directory of another build, such as the commit before a
// change: its gateway runs too, as `base`, interleaved with this build's, so that a change
// is measured within one run), REDIS_URL (default redis://127.0.0.1:6379: the required-work
// proxy claims its nonces there, and so do the gateways when REDIS=1; without it their replay
// cache and throttling are in memory). The identity store is embedded (PGlite).
// Prints CPU µs per request (median of the rounds) of each and the differences.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../src/common/config.js'
import { startGateway } from '../../src/gateway/server.js'
import { buildBareProxy } from '../bare-proxy.js'
import { buildRequiredWorkProxy, type RequiredWorkFixture } from '../required-work-proxy.js'
import { seed } from '../seed.js'
import { basicAuthorization, oauthAuthorization, wsseHeader } from '../signing.js'
import { freePort } from '../processes.js'
import { median } from '../report.js'
import { fromBuild } from './builds.js'

const N = Number(process.env.N ?? 20_000)
const R = Number(process.env.R ?? 6)
const C = Number(process.env.C ?? 16)
const credential = process.env.CREDENTIAL ?? 'none'
const only = process.env.ONLY
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const gatewaysOnRedis = process.env.REDIS === '1'
if (!['none', 'basic', 'wsse', 'oauth'].includes(credential)) throw new Error(`CREDENTIAL must be none, basic, wsse or oauth, not ${credential}`)
// The in-process replay cache holds at most 50,000 unexpired nonces of one user (replay/memory.ts).
if ((credential === 'wsse' || credential === 'oauth') && !gatewaysOnRedis && Math.min(N, 5000) + N * R > 50_000) {
  throw new Error(`CREDENTIAL=${credential} without REDIS=1: keep N × R + the warm-up under 50,000 (say N=6000 R=7)`)
}

const [upstreamPort, gatewayPort, adminPort, baseGatewayPort, baseAdminPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()]
const upstreamJs = fileURLToPath(new URL('../fixed-upstream.js', import.meta.url))
const upstreamProcess = spawn(process.execPath, [upstreamJs], { env: { ...process.env, FIXED_UPSTREAM_PORT: String(upstreamPort) }, stdio: 'ignore' })
const upstream = `http://127.0.0.1:${upstreamPort}`
const dataDir = mkdtempSync(join(tmpdir(), 'kigo-gateway-overhead-'))
const baseDataDir = mkdtempSync(join(tmpdir(), 'kigo-gateway-overhead-base-'))
const adminToken = randomBytes(24).toString('base64url')
const secretKey = randomBytes(32).toString('base64')
const host = `localhost:${gatewayPort}`
const path = '/api/statuses/show/9083712345678901234.json'

try {
  await waitForUpstream()
  const configOf = (ports: { gateway: number; admin: number }, dir: string) =>
    loadConfig({
      env: {
        KIGO_SECRET_KEY: secretKey,
        KIGO_ADMIN_TOKEN: adminToken,
        KIGO_GATEWAY_PORT: String(ports.gateway),
        KIGO_ADMIN_PORT: String(ports.admin),
        KIGO_CORE_URL: upstream,
        KIGO_DOMESTIC_HOST: host,
        KIGO_GATEWAY_BIND: '127.0.0.1',
        KIGO_DATA_DIR: dir,
        LOG_LEVEL: 'warn',
        ...(gatewaysOnRedis ? { REDIS_URL: redisUrl } : {}),
      },
    })
  const gateway = await startGateway(configOf({ gateway: gatewayPort, admin: adminPort }, dataDir))
  const base = process.env.BASE
    ? await (await fromBuild<{ startGateway: typeof startGateway }>(process.env.BASE, 'src/gateway/server.js')).startGateway(configOf({ gateway: baseGatewayPort, admin: baseAdminPort }, baseDataDir))
    : undefined
  const bare = await buildBareProxy({ upstream })
  let required: FastifyInstance | undefined
  try {
    const headers: Record<string, string> = { host }
    const headersOf = new Map<FastifyInstance, () => Record<string, string>>()
    let fixture: RequiredWorkFixture = { user: { id: 'benchuser', apiPassword: '' }, tokens: [] }
    const gateways = [{ g: gateway, port: gatewayPort, admin: adminPort }, ...(base ? [{ g: base, port: baseGatewayPort, admin: baseAdminPort }] : [])]
    for (const { g, port, admin } of gateways) {
      const own = { ...headers }
      let fresh = (): Record<string, string> => own
      if (credential !== 'none') {
        // The user, application and token as the benchmark makes them (bench/seed.ts), no entries.
        const { user, tokens } = await seed({ adminUrl: `http://127.0.0.1:${admin}`, adminToken, gatewayUrl: `http://127.0.0.1:${port}`, host, entries: 0, tokens: 1 })
        // The required-work proxy is told the credentials of the gateway measured first.
        if (g === gateway) fixture = { user, tokens }
        if (credential === 'basic') own.authorization = basicAuthorization(user.id, user.apiPassword)
        else if (credential === 'wsse') fresh = () => ({ ...own, 'x-wsse': wsseHeader(user.id, user.apiPassword) })
        else fresh = () => ({ ...own, authorization: oauthAuthorization(tokens[0]!, { method: 'GET', baseUri: `http://${host}${path}` }) })
      }
      headersOf.set(g.app, fresh)
    }
    headersOf.set(bare, () => headers)
    required = (await buildRequiredWorkProxy({ upstream, redisUrl, secretKey, fixture })).app
    headersOf.set(required, headersOf.get(gateway.app)!)

    const apps: Array<[string, FastifyInstance]> = [['bare', bare], ['required', required], ['gateway', gateway.app], ...(base ? [['base', base.app] as [string, FastifyInstance]] : [])]
    const measured = apps.filter(([name]) => only === undefined || only === name)
    const cpu = new Map<string, number[]>(measured.map(([name]) => [name, []]))
    for (const [, app] of measured) await round(app, headersOf.get(app)!, Math.min(N, 5000))
    for (let r = 0; r < R; r++) for (const [name, app] of measured) cpu.get(name)!.push(await round(app, headersOf.get(app)!, N))
    const medians = new Map([...cpu].map(([name, values]) => [name, median(values)]))
    for (const [name, values] of cpu) console.log(`${name.padEnd(8)} ${values.map((v) => v.toFixed(1)).join(' ')}  median ${medians.get(name)!.toFixed(1)} µs`)
    for (const floor of ['bare', 'required']) {
      const floorMedian = medians.get(floor)
      if (floorMedian === undefined) continue
      for (const name of ['gateway', 'base']) if (medians.has(name)) console.log(`${name} - ${floor} ${(medians.get(name)! - floorMedian).toFixed(1)} µs per request (credential: ${credential})`)
    }
  } finally {
    await gateway.close()
    await base?.close()
    await bare.close()
    await required?.close()
  }
} finally {
  upstreamProcess.kill()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(baseDataDir, { recursive: true, force: true })
}

/** CPU µs per request of `n` requests, C at a time. */
async function round(app: FastifyInstance, headers: () => Record<string, string>, n: number): Promise<number> {
  const started = process.cpuUsage()
  let sent = 0
  const worker = async () => {
    while (sent++ < n) {
      const res = await app.inject({ method: 'GET', url: path, headers: headers() })
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    }
  }
  await Promise.all(Array.from({ length: C }, worker))
  const used = process.cpuUsage(started)
  return (used.user + used.system) / n
}

async function waitForUpstream(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`${upstream}/readyz`)
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the fixed upstream did not start')
}
