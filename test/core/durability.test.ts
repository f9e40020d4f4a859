// docs/operations.md#stored-data: an entry acknowledged with a 2xx survives the process being killed (`kill -9`)
// at any moment, in both modes. The built core runs as a child process, is killed with
// SIGKILL while writes are being acknowledged, is restarted on the same store, and must
// then show every entry it acknowledged.
import { spawn, type ChildProcess } from 'node:child_process'
import { operationNameOf } from '../../src/common/route-table.js'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, it } from 'vitest'
import { identityKey, signIdentity } from '../../src/common/identity.js'
import { describeEachBackend, storageBackends } from '../helpers/backends.js'
import { inCi } from '../helpers/services.js'
import { freePort } from '../helpers/ports.js'

const mainJs = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url))
const built = existsSync(mainJs)
if (!built) {
  const reason = `${mainJs} is missing; run \`npm run build\` (npm test does)`
  if (inCi) throw new Error(reason)
  console.warn(`skipping durability suite: ${reason}`)
}

const domesticHost = 'localhost:18080'
const secretKey = randomBytes(32).toString('base64')
const key = identityKey(secretKey)
const author = 'durable_writer'

/** Keeps the number of acknowledged writes before the kill comfortably mid-stream. */
const killAfterAcks = 100
const concurrency = 8


interface Response {
  status: number
  body: string
}

function send(port: number, agent: Agent, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { host: domesticHost, ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** statuses/update as the gateway would forward it for an authenticated Basic user (docs/gateway.md#forwarding). */
function postStatus(port: number, agent: Agent, status: string): Promise<Response> {
  const path = '/api/statuses/update.json'
  const body = new URLSearchParams({ status }).toString()
  const identity = signIdentity(
    key,
    { method: 'POST', url: path, host: domesticHost, requestId: randomUUID(), operation: operationNameOf('POST', path), bodySha256: createHash('sha256').update(body).digest('base64url') },
    { user: author, userName: 'Durable Writer', authMethod: 'basic', consumer: '', scopes: [] },
  )
  return send(port, agent, 'POST', path, {
    ...identity,
    'content-type': 'application/x-www-form-urlencoded',
    'content-length': String(Buffer.byteLength(body)),
  }, body)
}

interface Core {
  child: ChildProcess
  port: number
  output: () => string
  exited: Promise<void>
}

async function startCore(env: Record<string, string>): Promise<Core> {
  const port = await freePort()
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, KIGO_CORE_PORT: String(port), KIGO_CORE_METRICS_PORT: '0' }
  // The backend is chosen by this test alone, never by the caller's environment.
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'KIGO_CONFIG']) if (!(name in env)) delete childEnv[name]
  const child = spawn(process.execPath, [mainJs, 'core'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)))
  child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const agent = new Agent()
  // Generous: a first embedded start creates the database (initdb), which on a busy
  // machine has taken over 30 s. The test is about durability, not start-up time.
  const deadline = Date.now() + 90_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`core exited before it was ready:\n${output}`)
    const ok = await send(port, agent, 'GET', '/healthz', {}).then((r) => r.status === 200, () => false)
    if (ok) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`core not ready within 90 s:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  agent.destroy()
  return { child, port, output: () => output, exited }
}

const running: Core[] = []
const cleanups: Array<() => Promise<void>> = []

afterEach(async () => {
  for (const core of running.splice(0)) {
    if (core.child.exitCode === null && core.child.signalCode === null) core.child.kill('SIGKILL')
    await core.exited
  }
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

// Without the build every backend is skipped (the reason is printed above).
const backends = (await storageBackends('durability')).map((b) => (built ? b : { ...b, setup: null }))

describeEachBackend('core killed with SIGKILL', backends, (setup) => {
  it('keeps every entry it acknowledged', { timeout: 180_000 }, async () => {
    const where = await setup()
    cleanups.push(where.cleanup)
    // The core is always given a data directory; in PostgreSQL mode an empty one of its own.
    const dataDir = where.databaseUrl ? mkdtempSync(join(tmpdir(), 'kigo-durability-')) : where.dataDir
    if (where.databaseUrl) cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    const backendEnv: Record<string, string> = where.databaseUrl ? { DATABASE_URL: where.databaseUrl } : {}
    const env = {
      ...backendEnv,
      KIGO_DATA_DIR: dataDir,
      KIGO_SECRET_KEY: secretKey,
      KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
      KIGO_DOMESTIC_HOST: domesticHost,
      LOG_LEVEL: 'warn',
    }

    const first = await startCore(env)
    running.push(first)
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
    const acked = new Map<string, string>()
    const refusals: string[] = []
    let sent = 0
    let killed = false

    // Writers post until the process dies under them; only a 200 with an entry counts.
    const writer = async () => {
      while (!killed) {
        const status = `durable ${sent++} ✓ 季語\n${randomUUID()}`
        let res: Response
        try {
          res = await postStatus(first.port, agent, status)
        } catch {
          return // connection reset by the kill: not acknowledged
        }
        if (res.status !== 200) {
          refusals.push(`${res.status} ${res.body.slice(0, 200)}`)
          if (refusals.length > 5) return
          continue
        }
        const entry = JSON.parse(res.body) as { id: string }
        acked.set(entry.id, status)
        if (acked.size >= killAfterAcks && !killed) {
          killed = true
          first.child.kill('SIGKILL')
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, writer))
    agent.destroy()
    await first.exited
    expect(refusals, first.output()).toEqual([])
    expect(first.child.signalCode).toBe('SIGKILL')
    expect(acked.size).toBeGreaterThanOrEqual(killAfterAcks)

    const second = await startCore(env)
    running.push(second)
    const reader = new Agent({ keepAlive: true, maxSockets: concurrency })
    const missing: string[] = []
    const ids = [...acked.keys()]
    for (let i = 0; i < ids.length; i += concurrency) {
      await Promise.all(
        ids.slice(i, i + concurrency).map(async (id) => {
          const res = await send(second.port, reader, 'GET', `/api/statuses/show/${id}.json`, {})
          const entry = res.status === 200 ? (JSON.parse(res.body) as { id: string; text: string }) : null
          if (!entry || entry.id !== id || entry.text !== acked.get(id)) missing.push(`${id}: ${res.status} ${res.body.slice(0, 200)}`)
        }),
      )
    }
    reader.destroy()
    expect(missing, second.output()).toEqual([])

    // The restarted core keeps taking writes, with ids above every acknowledged one.
    const after = await postStatus(second.port, new Agent(), 'after the restart')
    expect(after.status, after.body).toBe(200)
    const afterId = BigInt((JSON.parse(after.body) as { id: string }).id)
    expect(ids.every((id) => BigInt(id) < afterId)).toBe(true)
  })
})
