// Logs an operator can read during an outage (docs/operations.md#what-an-outage-looks-like): one warn line when
// a PostgreSQL, Redis or core outage starts and one when it ends (with its duration), not
// a line with a stack trace per request; an upload the client abandoned is info.
//
// The deadlines are short enough that a frozen dependency fails requests within seconds and
// long enough that a busy machine does not miss them while nothing is frozen. Each step
// counts the lines of its own outage (from the moment it freezes, once no outage is going),
// and thaws what it froze even when it fails, so that the next steps meet a working stack.
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, type Config } from '../../src/common/config.js'
import { startCore, type RunningCore } from '../../src/core/server.js'
import { startGateway, type RunningGateway } from '../../src/gateway/server.js'
import { FreezableProxy } from '../helpers/freezable-proxy.js'
import { eventually } from '../helpers/private-redis.js'
import { availableRedis, freshPostgres } from '../helpers/services.js'
import { stackEnv } from '../helpers/stack.js'

const pgDb = await freshPostgres()
const redisUrl = await availableRedis()

type Line = Record<string, unknown> & { level: number; msg: string }
const gatewayLines: Line[] = []
const coreLines: Line[] = []
const sink = (into: Line[]) => ({ write: (chunk: string) => void String(chunk).split('\n').filter(Boolean).forEach((l) => into.push(JSON.parse(l) as Line)) })

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')
const named = (lines: Line[], msg: string) => lines.filter((l) => l.msg === msg)

/** Waits until `dependency` has no outage going on in `lines` (each start has its end); returns where the next one's lines begin. */
async function noOutage(lines: Line[], dependency: string): Promise<number> {
  await eventually(async () => named(lines, `${dependency} outage started`).length === named(lines, `${dependency} outage ended`).length, 10_000)
  return lines.length
}

describe.skipIf(!pgDb || !redisUrl)('outage lines', () => {
  let dir: string
  let config: Config
  let pgProxy: FreezableProxy
  let redisProxy: FreezableProxy
  let core: RunningCore | null
  let gateway: RunningGateway
  let base: string
  const users: Record<string, string> = {}

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kigo-outage-logs-'))
    const pgUrl = new URL(pgDb!.url)
    pgProxy = await FreezableProxy.start({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) })
    const rUrl = new URL(redisUrl!)
    redisProxy = await FreezableProxy.start({ host: rUrl.hostname, port: Number(rUrl.port || 6379) })
    const { env, gatewayPort: gw } = await stackEnv(dir, {
      DATABASE_URL: pgProxy.urlFor(pgDb!.url),
      REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`,
      LOG_LEVEL: 'info',
    })
    config = loadConfig({
      env,
      overrides: { gateway: { host: '127.0.0.1' }, dependencies: { connectTimeoutMs: 1000, statementTimeoutMs: 1500, redisCommandTimeoutMs: 1000, requestDeadlineMs: 2000 } },
    })
    core = await startCore(config, { logger: { stream: sink(coreLines) } })
    gateway = await startGateway(config, { logStream: sink(gatewayLines) })
    base = `http://localhost:${gw}`
    for (const id of ['alice', 'bob', 'carol', 'dave']) {
      const res = await fetch(`${gateway.adminUrl}/admin/users`, { method: 'POST', headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ id }) })
      users[id] = ((await res.json()) as { api_password: string }).api_password
    }
  }, 30_000)

  afterAll(async () => {
    pgProxy?.thaw()
    redisProxy?.thaw()
    await gateway?.close()
    await core?.close()
    await pgProxy?.close()
    await redisProxy?.close()
    await pgDb?.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const post = (user: string) =>
    fetch(`${base}/api/statuses/update.json`, { method: 'POST', headers: { authorization: basic(user, users[user]!), 'content-type': 'application/x-www-form-urlencoded' }, body: 'status=hello' })

  it('PostgreSQL: one warn line when the outage starts, one with its duration when it ends, no error lines', async () => {
    const gatewayFrom = await noOutage(gatewayLines, 'postgres')
    const coreFrom = await noOutage(coreLines, 'postgres')
    const gatewayOutage = () => gatewayLines.slice(gatewayFrom)
    const coreOutage = () => coreLines.slice(coreFrom)
    pgProxy.freeze()
    try {
      for (const user of ['bob', 'carol', 'dave']) expect((await post(user)).status).toBe(503)
      for (let i = 0; i < 3; i++) expect((await fetch(`${base}/api/statuses/show/1.json`)).status).toBe(503)
      expect(named(gatewayOutage(), 'postgres outage started')).toHaveLength(1)
      expect(named(gatewayOutage(), 'postgres outage started')[0]!.level).toBe(40)
      expect(named(gatewayOutage(), 'postgres outage ended')).toEqual([])
      expect(named(coreOutage(), 'postgres outage started')).toHaveLength(1)
      expect(named(coreOutage(), 'postgres outage ended')).toEqual([])
    } finally {
      pgProxy.thaw()
    }
    await eventually(async () => named(gatewayOutage(), 'postgres outage ended').length > 0 && named(coreOutage(), 'postgres outage ended').length > 0, 10_000)
    const ended = named(gatewayOutage(), 'postgres outage ended')[0]!
    expect(ended.level).toBe(40)
    expect(ended.durationMs).toBeGreaterThan(0)
    for (const lines of [gatewayLines, coreLines]) {
      expect(lines.filter((l) => l.level >= 50)).toEqual([])
      expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([])
    }
    expect((await post('bob')).status).toBe(200)
  }, 60_000)

  it('Redis: one warn line when the outage starts and one when it ends', async () => {
    const wsse = () => {
      const nonce = randomBytes(8).toString('hex')
      const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
      const digest = createHash('sha1').update(nonce + created + users.alice).digest('base64')
      return `UsernameToken Username="alice", PasswordDigest="${digest}", Nonce="${nonce}", Created="${created}"`
    }
    const from = await noOutage(gatewayLines, 'redis')
    const outage = () => gatewayLines.slice(from)
    redisProxy.freeze()
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${base}/api/statuses/update.json`, { method: 'POST', headers: { 'x-wsse': wsse(), 'content-type': 'application/x-www-form-urlencoded' }, body: 'status=hi' })
        expect(res.status).toBe(503)
      }
      expect(named(outage(), 'redis outage started')).toHaveLength(1)
      expect(named(outage(), 'redis outage ended')).toEqual([])
    } finally {
      redisProxy.thaw()
    }
    await eventually(async () => named(outage(), 'redis outage ended').length > 0, 10_000)
    expect(named(outage(), 'redis outage ended')[0]!.durationMs).toBeGreaterThan(0)
    expect(gatewayLines.filter((l) => l.level >= 50)).toEqual([])
  }, 60_000)

  it('an upload the client abandons is logged at info, not as an error', async () => {
    const before = gatewayLines.length
    const coreBefore = coreLines.length
    const boundary = 'xxkigo'
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${base}/api/statuses/update.json`, {
        method: 'POST',
        headers: { authorization: basic('bob', users.bob!), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '100000' },
      })
      req.on('error', () => resolve())
      req.on('response', () => resolve())
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n` + 'x'.repeat(2000))
      setTimeout(() => req.destroy(), 300)
    })
    // The gateway logs the abandoned request once it notices the closed socket: on a busy
    // machine that can take a while, so wait for the line rather than a fixed time.
    const closedLines = () => [...gatewayLines.slice(before), ...coreLines.slice(coreBefore)].filter((l) => l.level === 30 && /client closed/.test(l.msg))
    await eventually(async () => closedLines().length > 0, 10_000)
    const lines = [...gatewayLines.slice(before), ...coreLines.slice(coreBefore)]
    expect(lines.filter((l) => l.level >= 50)).toEqual([])
    expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([])
    expect(closedLines().length).toBeGreaterThan(0)
  }, 20_000)

  it('a refused forward while the core is down: one outage line, no stack trace, the request line says 503', async () => {
    await core!.close()
    core = null
    const before = gatewayLines.length
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/api/statuses/show/1.json`)).status).toBe(503)
    const lines = gatewayLines.slice(before)
    expect(named(lines, 'core outage started')).toHaveLength(1)
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(3)
    // Nothing else about the refused forwards (a busy machine may add another dependency's outage lines).
    const otherOutage = (l: Line) => typeof l.dependency === 'string' && l.dependency !== 'core'
    expect(lines.filter((l) => l.msg !== 'request' && l.msg !== 'core outage started' && !otherOutage(l))).toEqual([])
    expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([])
  })
})
