// How long WSSE takes to refuse a known user and an unknown one (docs/security.md#wsse-timing):
// starts `node dist/src/main.js embedded` on a fresh data directory (throttling raised out
// of the way, so every request is verified), then sends interleaved GETs of
// /api/statuses/friends_timeline.json over one kept-alive connection: a known user with
// the right password, a known user with a wrong one, an unknown (well-formed) user, and a
// new unknown user each time (never in the lookup cache).
// Prints each kind's median, p10 and p90 in milliseconds.
//   npm run build && node dist/bench/wsse-user-timing.js [requests per kind, default 2000]
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { freePort, spawnApp, waitReady } from './processes.js'
import { wsseHeader } from './signing.js'

const mainJs = fileURLToPath(new URL('../src/main.js', import.meta.url))
const perKind = Number(process.argv[2] ?? 2000)

const dir = mkdtempSync(join(tmpdir(), 'kigo-wsse-timing-'))
const [port, corePort, adminPort] = [await freePort(), await freePort(), await freePort()]
const adminToken = randomBytes(24).toString('base64url')
const configFile = join(dir, 'config.json')
const many = 1_000_000_000
writeFileSync(configFile, JSON.stringify({ auth: { throttle: { maxFailures: many, addressMaxFailures: many, userMaxFailures: many } } }))
const app = spawnApp('embedded', [mainJs, 'embedded'], {
  ...process.env,
  KIGO_DATA_DIR: join(dir, 'data'),
  KIGO_CONFIG: configFile,
  KIGO_SECRET_KEY: randomBytes(32).toString('base64'),
  KIGO_ADMIN_TOKEN: adminToken,
  KIGO_GATEWAY_PORT: String(port),
  KIGO_CORE_PORT: String(corePort),
  KIGO_CORE_METRICS_PORT: '0',
  KIGO_ADMIN_PORT: String(adminPort),
  LOG_LEVEL: 'warn',
})
try {
  await waitReady(app, `http://127.0.0.1:${port}/readyz`)
  const created = await fetch(`http://127.0.0.1:${adminPort}/admin/users`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: 'frank' }) })
  const { api_password: password } = (await created.json()) as { api_password: string }
  const agent = new Agent({ connections: 1 })
  const kinds = {
    known: () => wsseHeader('frank', password),
    'known, wrong password': () => wsseHeader('frank', 'not-the-password'),
    unknown: () => wsseHeader('nobody', 'not-the-password'),
    'unknown, a new one each time': () => wsseHeader(`nobody${randomBytes(3).toString('hex')}`, 'not-the-password'),
  }
  const times = Object.fromEntries(Object.keys(kinds).map((k) => [k, [] as number[]])) as Record<keyof typeof kinds, number[]>
  const statuses = new Map<string, number>()
  const once = async (kind: keyof typeof kinds, keep: boolean) => {
    const started = process.hrtime.bigint()
    const res = await request(`http://127.0.0.1:${port}/api/statuses/friends_timeline.json`, { dispatcher: agent, headers: { 'x-wsse': kinds[kind]() } })
    await res.body.dump()
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    if (!keep) return
    times[kind].push(ms)
    statuses.set(`${kind} ${res.statusCode}`, (statuses.get(`${kind} ${res.statusCode}`) ?? 0) + 1)
  }
  // Warm-up, then the kinds interleaved so that drift hits each alike.
  for (let i = 0; i < 300; i++) for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>) await once(kind, false)
  for (let i = 0; i < perKind; i++) for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>) await once(kind, true)
  const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3)
  for (const [kind, list] of Object.entries(times)) {
    const sorted = [...list].sort((a, b) => a - b)
    console.log(`${kind.padEnd(22)} median ${at(sorted, 0.5)} ms  p10 ${at(sorted, 0.1)}  p90 ${at(sorted, 0.9)}  (${sorted.length} requests)`)
  }
  console.log([...statuses].map(([k, n]) => `${k}: ${n}`).join(', '))
  await agent.close()
} finally {
  await app.stop()
  rmSync(dir, { recursive: true, force: true })
}
