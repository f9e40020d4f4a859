// A PostgreSQL or Redis that accepts connections and never answers (stopped with SIGSTOP,
// cut off by a partition) must cost a request a bounded time: 503 with Retry-After in the
// request's format, counted; /readyz within 2 s naming the dependency; recovery by itself.
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FreezableProxy } from '../helpers/freezable-proxy.js'
import { eventually } from '../helpers/private-redis.js'
import { availableRedis, freshPostgres } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'

const pgDb = await freshPostgres()
const redisUrl = await availableRedis()

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')

function wsse(user: string, password: string): string {
  const nonce = randomBytes(16).toString('hex')
  const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const digest = createHash('sha1').update(nonce + created + password).digest('base64')
  return `UsernameToken Username="${user}", PasswordDigest="${digest}", Nonce="${nonce}", Created="${created}"`
}

async function timed(request: Promise<Response>): Promise<{ res: Response; ms: number; text: string }> {
  const started = Date.now()
  const res = await request
  const text = await res.text()
  return { res, ms: Date.now() - started, text }
}

describe.skipIf(!pgDb || !redisUrl)('a dependency that accepts connections and never answers', () => {
  let pgProxy: FreezableProxy
  let redisProxy: FreezableProxy
  let stack: Stack
  const users: Record<string, string> = {}

  beforeAll(async () => {
    const pgUrl = new URL(pgDb!.url)
    pgProxy = await FreezableProxy.start({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) })
    const rUrl = new URL(redisUrl!)
    redisProxy = await FreezableProxy.start({ host: rUrl.hostname, port: Number(rUrl.port || 6379) })
    stack = await startStack({
      databaseUrl: pgProxy.urlFor(pgDb!.url),
      redisUrl: `redis://127.0.0.1:${redisProxy.port}`,
      overrides: { dependencies: { connectTimeoutMs: 300, statementTimeoutMs: 600, redisCommandTimeoutMs: 300, requestDeadlineMs: 1000 } },
    })
    for (const id of ['alice', 'bob', 'carol']) users[id] = (await stack.addUser(id)).api_password
  }, 30_000)

  afterAll(async () => {
    pgProxy?.thaw()
    redisProxy?.thaw()
    await stack?.close()
    await pgProxy?.close()
    await redisProxy?.close()
    await pgDb?.drop()
  })

  const post = (path: string, headers: Record<string, string>) =>
    fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: 'status=hello' })

  it('PostgreSQL hung: an uncached Basic credential gets 503 with Retry-After in its format within the deadline', async () => {
    pgProxy.freeze()
    const json = await timed(post('/api/statuses/update.json', { authorization: basic('bob', users.bob!) }))
    expect(json.res.status).toBe(503)
    expect(Number(json.res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(JSON.parse(json.text).error.code).toBe('store_unavailable')
    expect(json.ms).toBeLessThan(2500)

    const xml = await timed(post('/api/statuses/update.xml', { authorization: basic('carol', users.carol!) }))
    expect(xml.res.status).toBe(503)
    expect(xml.res.headers.get('content-type')).toMatch(/xml/)
    expect(xml.text).toContain('store_unavailable')
    expect(xml.ms).toBeLessThan(2500)
  })

  it('PostgreSQL hung: the gateway\'s, the operator\'s and the core\'s /readyz answer within 2 s and name the store', async () => {
    const gw = await timed(fetch(`${stack.url}/readyz`))
    expect(gw.res.status).toBe(503)
    expect(gw.ms).toBeLessThan(2000)
    expect(JSON.parse(gw.text).checks).toMatchObject({ store: false, redis: true, core: true })
    const op = await timed(fetch(`${stack.adminUrl}/readyz`))
    expect(op.res.status).toBe(503)
    expect(op.ms).toBeLessThan(2000)
    expect(JSON.parse(op.text).checks.store).toBe(false)
    const core = await timed(fetch(`${stack.coreUrl}/readyz`))
    expect(core.res.status).toBe(503)
    expect(core.ms).toBeLessThan(2000)
    expect(JSON.parse(core.text).error.code).toBe('store_unavailable')
  })

  it('PostgreSQL hung: the core answers a read 503 with Retry-After instead of waiting', async () => {
    const read = await timed(fetch(`${stack.url}/api/statuses/show/1.json`))
    expect(read.res.status).toBe(503)
    expect(read.res.headers.get('retry-after')).not.toBeNull()
    expect(read.ms).toBeLessThan(2500)
  })

  it('counts the refusals (kigo_auth_requests_total, outcome unavailable)', async () => {
    const res = await fetch(`${stack.adminUrl}/metrics`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    const text = await res.text()
    const line = text.split('\n').find((l) => l.startsWith('kigo_auth_requests_total') && l.includes('outcome="unavailable"'))
    expect(line).toBeDefined()
    expect(Number(line!.split(' ').pop())).toBeGreaterThanOrEqual(2)
  })

  it('PostgreSQL back: requests succeed again without a restart', async () => {
    pgProxy.thaw()
    await eventually(async () => (await post('/api/statuses/update.json', { authorization: basic('bob', users.bob!) })).status === 200, 10_000)
    expect((await fetch(`${stack.url}/readyz`)).status).toBe(200)
  }, 15_000)

  it('Redis hung: a WSSE request (nonce claim) gets 503 with Retry-After quickly, and /readyz names Redis', async () => {
    redisProxy.freeze()
    const r = await timed(post('/api/statuses/update.json', { 'x-wsse': wsse('alice', users.alice!) }))
    expect(r.res.status).toBe(503)
    expect(r.res.headers.get('retry-after')).not.toBeNull()
    expect(r.ms).toBeLessThan(2000)
    const ready = await timed(fetch(`${stack.url}/readyz`))
    expect(ready.res.status).toBe(503)
    expect(ready.ms).toBeLessThan(2000)
    expect(JSON.parse(ready.text).checks).toMatchObject({ store: true, redis: false })
    redisProxy.thaw()
    await eventually(async () => (await post('/api/statuses/update.json', { 'x-wsse': wsse('alice', users.alice!) })).status === 200, 10_000)
  }, 20_000)
})
