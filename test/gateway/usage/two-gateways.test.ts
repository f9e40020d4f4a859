// Two gateways of one deployment on one PostgreSQL database (docs/operations.md#modes, docs/gateway.md#the-migration-policy, docs/gateway.md#the-usage-report): the
// usage report adds up what both saw, within 15 s and with default settings; a policy set
// at one gateway is applied by the other within 15 s; a gateway that shuts down writes
// its last counts first.
import { randomBytes } from 'node:crypto'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { basicHeader, form, oauthHeader, wsseHeader, type OAuthClient } from '../policy/signers.js'

const pg = await freshPostgres()

interface UsageRecord {
  method: string
  user: string
  client: string
  accepted: number
  failed_credentials: number
  count: number
  first_seen: string
  last_seen: string
}

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now()
  for (;;) {
    const value = await probe()
    if (value !== undefined) return { value, elapsedMs: Date.now() - started }
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe.skipIf(!pg)('two gateways sharing one store', () => {
  let a: Stack
  let b: Stack
  let shared: { databaseUrl: string; secretKey: string; adminToken: string }
  let alice: { api_password: string }
  let client: OAuthClient
  const startedAt = Date.now()

  beforeAll(async () => {
    shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    a = await startStack(shared)
    b = await startStack({ ...shared, coreUrl: a.coreUrl })
    alice = await a.addUser('alice', 'Alice')
    client = await a.addOAuthClient('alice', ['write_public'])
  })

  afterAll(async () => {
    await b?.close()
    await a?.close()
    await pg?.drop()
  })

  /** One deployment behind two gateways: every request names a's host, whichever gateway it reaches. */
  const send = async (target: Stack, headers: Record<string, string>, body: Record<string, string>) => {
    const res = await request(`${target.globalUrl}/api/statuses/update.json`, {
      method: 'POST',
      headers: { ...form, ...headers, host: new URL(a.url).host },
      body: new URLSearchParams(body).toString(),
    })
    await res.body.dump()
    return { status: res.statusCode, header: (name: string) => res.headers[name] as string | undefined }
  }
  const viaOAuth = (target: Stack, status: string) => {
    const url = `${a.url}/api/statuses/update.json`
    return send(target, { ...oauthHeader(client, { url, method: 'POST', data: { status } }, Date.now()), 'user-agent': 'Shiny OAuth App/3.1' }, { status })
  }

  it('adds up the usage both gateways saw, within 15 s', async () => {
    // The mix: 3 OAuth, 2 Basic, 1 WSSE, 1 WSSE replay, spread over both gateways.
    const statuses = [
      (await viaOAuth(a, 'o1')).status,
      (await viaOAuth(a, 'o2')).status,
      (await viaOAuth(b, 'o3')).status,
      (await send(a, { ...basicHeader('alice', alice.api_password), 'user-agent': 'OldClient/1.0 (X11)' }, { status: 'b1' })).status,
      (await send(b, { ...basicHeader('alice', alice.api_password), 'user-agent': 'OldClient/1.0 (X11)' }, { status: 'b2' })).status,
    ]
    const wsse = wsseHeader('alice', alice.api_password, Date.now())
    statuses.push((await send(b, wsse, { status: 'w1', source: 'feed-poster' })).status)
    statuses.push((await send(b, wsse, { status: 'w1 again', source: 'feed-poster' })).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 401])

    // The replayed WSSE credential counts beside the accepted request, as a failure.
    const expected = [
      { method: 'basic', user: 'alice', client: 'OldClient/1.0 (X11)', count: 2, accepted: 2, failed_credentials: 0 },
      { method: 'oauth', user: 'alice', client: 'Shiny OAuth App/3.1', count: 3, accepted: 3, failed_credentials: 0 },
      { method: 'wsse', user: 'alice', client: 'feed-poster', count: 2, accepted: 1, failed_credentials: 1 },
    ]
    // Read at b: b writes its own counts on the read; a's arrive with a's next flush.
    const { value: records, elapsedMs } = await eventually(async () => {
      const r = await b.admin<{ records: UsageRecord[] }>('GET', '/admin/usage')
      expect(r.status).toBe(200)
      const simple = r.body.records.map(({ method, user, client, count, accepted, failed_credentials }) => ({ method, user, client, count, accepted, failed_credentials })).sort((x, y) => x.method.localeCompare(y.method))
      return JSON.stringify(simple) === JSON.stringify(expected) ? r.body.records : undefined
    }, 15_000)
    expect(elapsedMs).toBeLessThan(15_000)
    for (const r of records) {
      expect(Date.parse(r.first_seen)).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000) * 1000)
      expect(Date.parse(r.last_seen)).toBeGreaterThanOrEqual(Date.parse(r.first_seen))
      expect(Date.parse(r.last_seen)).toBeLessThanOrEqual(Date.now())
      expect(r.first_seen).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    }
    // Both gateways answer the same report.
    const atA = (await a.admin<{ records: UsageRecord[] }>('GET', '/admin/usage')).body.records
    expect(atA.map((r) => `${r.method} ${r.count}`).sort()).toEqual(records.map((r) => `${r.method} ${r.count}`).sort())
  })

  it('filters by method, user and since, and refuses bad filters with 400', async () => {
    const basic = await a.admin<{ records: UsageRecord[] }>('GET', '/admin/usage?method=basic')
    expect(basic.body.records.map((r) => r.method)).toEqual(['basic'])
    expect((await a.admin<{ records: UsageRecord[] }>('GET', '/admin/usage?user=nobody')).body.records).toEqual([])
    expect((await a.admin<{ records: UsageRecord[] }>('GET', `/admin/usage?user=alice&method=wsse`)).body.records).toHaveLength(1)
    const future = new Date(Date.now() + 3_600_000).toISOString()
    expect((await a.admin<{ records: UsageRecord[] }>('GET', `/admin/usage?since=${encodeURIComponent(future)}`)).body.records).toEqual([])
    const past = new Date(startedAt - 3_600_000).toISOString()
    expect((await a.admin<{ records: UsageRecord[] }>('GET', `/admin/usage?since=${encodeURIComponent(past)}`)).body.records).toHaveLength(3)
    for (const q of ['method=digest', 'user=a', 'since=yesterday', 'since=2027-02-30T00:00:00Z', 'limit=0', 'colour=red', 'method=basic&method=wsse']) {
      const r = await a.admin<{ error: { status: number; code: string; message: string } }>('GET', `/admin/usage?${q}`)
      expect(r.status, q).toBe(400)
      expect(r.body.error.code).toBe('invalid_parameter')
    }
    const unauthenticated = await fetch(`${a.adminUrl}/admin/usage`)
    expect(unauthenticated.status).toBe(401)
  })

  it('applies a policy set at one gateway at the other within 15 s', async () => {
    const set = await a.admin('PUT', '/admin/policy', { basic: { state: 'deprecate' } })
    expect(set.status).toBe(200)
    const { elapsedMs } = await eventually(async () => {
      const res = await send(b, basicHeader('alice', alice.api_password), { status: 'policy?' })
      return res.header('deprecation')
    }, 15_000)
    expect(elapsedMs).toBeLessThan(15_000)
    expect((await b.admin<any>('GET', '/admin/policy')).body.basic.state).toBe('deprecate')
  })

  it('writes the last counts when a gateway shuts down', async () => {
    // A third gateway that would flush only every 15 s: its counts must not wait for that.
    const c = await startStack({ ...shared, coreUrl: a.coreUrl, overrides: { migration: { usageFlushMs: 15_000, policyRefreshMs: 15_000 } } })
    const res = await send(c, { ...basicHeader('alice', alice.api_password), 'user-agent': 'LastWords/1' }, { status: 'bye' })
    expect(res.status).toBe(200)
    await c.close()
    const r = await a.admin<{ records: UsageRecord[] }>('GET', '/admin/usage?method=basic')
    expect(r.body.records.find((x) => x.client === 'LastWords/1')?.count).toBe(1)
  })
})
