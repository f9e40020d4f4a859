// Usage collection (docs/gateway.md#the-usage-report) on each storage backend (embedded and PostgreSQL): counts
// held in memory and added to the stored ones by each flush; counts that could not be
// written are kept for the next flush; the client name comes from `source`, else the
// User-Agent, bounded.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../../src/common/sql.js'
import { clientName } from '../../../src/gateway/usage/client-name.js'
import { UsageRecorder } from '../../../src/gateway/usage/recorder.js'
import { UsageStore } from '../../../src/gateway/usage/store.js'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'

const backends = await gatewayDbBackends('usage')

const ok = (method: 'basic' | 'wsse' | 'oauth', user: string) => ({ ok: true, method, outcome: 'ok' as const, identity: { user } })
const t0 = Date.parse('2027-03-01T10:00:30Z')
const accepted = (n: number) => ({ accepted: n, refusedByPolicy: 0, failedCredentials: 0, throttled: 0 })
/** What a row of Basic, WSSE or OAuth reads back with: no site or client identity, no owner, never refused. */
const plain = { clientId: '', firstRefused: null, owner: null }

describeBackends('UsageRecorder', backends, (backend) => {
  let db: Db
  let store: UsageStore

  beforeAll(() => {
    db = backend().db
    store = new UsageStore(db)
  })

  it('adds each flush to the stored counts, keeping the first and last time seen', async () => {
    const recorder = new UsageRecorder(store)
    recorder.observe(ok('basic', 'ann'), () => 'AnnClient', t0)
    recorder.observe(ok('basic', 'ann'), () => 'AnnClient', t0 + 1000)
    recorder.observe(ok('wsse', 'ann'), () => 'feeder', t0 + 2000)
    await recorder.flush()
    recorder.observe(ok('basic', 'ann'), () => 'AnnClient', t0 + 90_000)
    await recorder.flush()
    const rows = await store.list({ user: 'ann' })
    expect(rows).toEqual([
      { method: 'basic', user: 'ann', client: 'AnnClient', count: 3, ...accepted(3), firstSeen: t0, lastSeen: t0 + 90_000, ...plain },
      { method: 'wsse', user: 'ann', client: 'feeder', count: 1, ...accepted(1), firstSeen: t0 + 2000, lastSeen: t0 + 2000, ...plain },
    ])
    // Per-minute counts for the chart: 10:00:30 to 10:00:32, then 10:02:00.
    const minutes = await store.minutes(t0 - 60_000, t0 + 180_000)
    expect(minutes).toEqual([
      { minute: Date.parse('2027-03-01T10:00:00Z'), method: 'basic', count: 2, accepted: 2 },
      { minute: Date.parse('2027-03-01T10:00:00Z'), method: 'wsse', count: 1, accepted: 1 },
      { minute: Date.parse('2027-03-01T10:02:00Z'), method: 'basic', count: 1, accepted: 1 },
    ])
  })

  it('counts each minute once per method, however the observed times go back and forth between flushes', async () => {
    const recorder = new UsageRecorder(store)
    const base = Date.parse('2027-04-01T08:00:00Z')
    const anon = { ok: true, method: 'none' as const, outcome: 'ok' as const, identity: null }
    // Two gateways' clocks, or requests observed late: minutes interleave before one flush.
    recorder.observe(ok('basic', 'ivy'), () => 'IvyTool', base + 10_000)
    recorder.observe(anon, () => '', base + 20_000)
    recorder.observe(ok('basic', 'ivy'), () => 'IvyTool', base + 70_000)
    recorder.observe(ok('basic', 'ivy'), () => 'IvyTool', base + 50_000)
    recorder.observe(anon, () => '', base + 59_999)
    recorder.observe(ok('basic', 'ivy'), () => 'IvyTool', base + 61_000)
    await recorder.flush()
    recorder.observe(ok('basic', 'ivy'), () => 'IvyTool', base + 30_000)
    await recorder.flush()
    expect(await store.minutes(base, base + 120_000)).toEqual([
      { minute: base, method: 'basic', count: 3, accepted: 3 },
      { minute: base, method: 'none', count: 2, accepted: 2 },
      { minute: base + 60_000, method: 'basic', count: 2, accepted: 2 },
    ])
  })

  it('keeps the deployment of each row\'s latest request, whichever gateway flushes last', async () => {
    const deploymentOf = async () => (await db.query<{ deployment: string }>(`SELECT deployment FROM kigo_gateway.auth_usage WHERE user_id = 'dee'`))[0]?.deployment
    const recorder = new UsageRecorder(store)
    recorder.observe(ok('basic', 'dee'), () => 'DeeTool', t0 + 10_000, undefined, 'global')
    await recorder.flush()
    expect(await deploymentOf()).toBe('global')
    // An older request flushed later (another gateway's) leaves it; a newer one changes it.
    recorder.observe(ok('basic', 'dee'), () => 'DeeTool', t0, undefined, 'domestic')
    await recorder.flush()
    expect(await deploymentOf()).toBe('global')
    recorder.observe(ok('basic', 'dee'), () => 'DeeTool', t0 + 20_000, undefined, 'global')
    recorder.observe(ok('basic', 'dee'), () => 'DeeTool', t0 + 30_000)
    await recorder.flush()
    expect(await deploymentOf()).toBe('domestic')
  })

  it('counts each outcome in its column; failures naming no existing user go to one row; anonymous requests to none', async () => {
    const recorder = new UsageRecorder(store)
    recorder.observe({ ok: false, method: 'wsse', outcome: 'policy_denied', user: 'ben' }, () => 'x', t0 + 1000)
    recorder.observe({ ok: false, method: 'wsse', outcome: 'policy_denied', user: 'ben' }, () => 'x', t0 + 2000)
    recorder.observe({ ok: false, method: 'wsse', outcome: 'bad_credentials', user: 'ben' }, () => 'x', t0)
    recorder.observe({ ok: false, method: 'wsse', outcome: 'throttled', user: 'ben' }, () => 'x', t0)
    recorder.observe({ ok: false, method: 'wsse', outcome: 'unavailable', user: 'ben' }, () => 'x', t0)
    recorder.observe({ ok: false, method: 'basic', outcome: 'replay', user: 'nobody1' }, () => 'y', t0)
    recorder.observe({ ok: false, method: 'basic', outcome: 'bad_credentials', user: 'nobody2' }, () => 'z', t0)
    recorder.observe({ ok: true, method: 'none', outcome: 'ok', identity: null }, () => 'x', t0)
    await recorder.flush()
    expect(await store.list({ user: 'ben' })).toEqual([
      { method: 'wsse', user: 'ben', client: 'x', count: 4, accepted: 0, refusedByPolicy: 2, failedCredentials: 1, throttled: 1, firstSeen: t0, lastSeen: t0 + 2000, ...plain, firstRefused: t0 + 1000 },
    ])
    expect(await store.list({ user: '(unknown users)' })).toEqual([
      { method: 'basic', user: '(unknown users)', client: '', count: 2, accepted: 0, refusedByPolicy: 0, failedCredentials: 2, throttled: 0, firstSeen: t0, lastSeen: t0, ...plain },
    ])
  })

  it('keeps at most maxClientsPerUser distinct clients per user and method; the rest are one row, counted', async () => {
    const bounded = new UsageStore(db, { maxClientsPerUser: 5 })
    const recorder = new UsageRecorder(bounded)
    for (let i = 0; i < 300; i++) recorder.observe(ok('basic', 'fay'), () => `Agent/${String(i).padStart(3, '0')}`, t0 + i)
    await recorder.flush()
    for (let i = 300; i < 310; i++) recorder.observe(ok('basic', 'fay'), () => `Agent/${i}`, t0 + i)
    recorder.observe(ok('basic', 'fay'), () => 'Agent/000', t0 + 400)
    await recorder.flush()
    const rows = await store.list({ user: 'fay' })
    expect(rows).toHaveLength(6)
    expect(rows.reduce((n, r) => n + r.count, 0)).toBe(311)
    expect(rows.find((r) => r.client === '(other clients)')?.accepted).toBe(305)
    expect(rows.find((r) => r.client === 'Agent/000')?.count).toBe(2)
  })

  it('prunes rows last seen before the retention', async () => {
    let clock = t0
    const recorder = new UsageRecorder(store, { now: () => clock, retainRowsMs: 30 * 86_400_000 })
    recorder.observe(ok('basic', 'gus'), () => 'old', t0)
    await recorder.flush()
    expect(await store.list({ user: 'gus' })).toHaveLength(1)
    clock = t0 + 31 * 86_400_000
    recorder.observe(ok('basic', 'gus'), () => 'new', clock)
    await recorder.flush()
    expect((await store.list({ user: 'gus' })).map((r) => r.client)).toEqual(['new'])
  })

  it('keeps the counts of a failed flush and writes them with the next one', async () => {
    let failing = true
    const flaky = Object.create(store) as UsageStore
    flaky.add = async (rows, minutes) => {
      if (failing) throw new Error('store away')
      return store.add(rows, minutes)
    }
    const recorder = new UsageRecorder(flaky)
    recorder.observe(ok('oauth', 'cyd'), () => 'app', t0)
    await expect(recorder.flush()).rejects.toThrow('store away')
    recorder.observe(ok('oauth', 'cyd'), () => 'app', t0 + 5000)
    failing = false
    await recorder.flush()
    expect(await store.list({ user: 'cyd' })).toEqual([{ method: 'oauth', user: 'cyd', client: 'app', count: 2, ...accepted(2), firstSeen: t0, lastSeen: t0 + 5000, ...plain }])
  })

  it('flushes what is left on close', async () => {
    const recorder = new UsageRecorder(store, { flushMs: 60_000 })
    recorder.start()
    recorder.observe(ok('basic', 'dee'), () => 'c', t0)
    await recorder.close()
    expect((await store.list({ user: 'dee' }))[0]?.count).toBe(1)
  })
})

describe('clientName', () => {
  const req = (url: string, headers: Record<string, string> = {}, body?: string) => ({
    url,
    headers,
    contentType: body === undefined ? undefined : 'application/x-www-form-urlencoded; charset=utf-8',
    body: body === undefined ? undefined : Buffer.from(body),
  })

  it('takes source from the query, then the form body, then the User-Agent', () => {
    expect(clientName(req('/api/statuses/update.json?source=Q%20App', { 'user-agent': 'UA' }, 'source=B'))).toBe('Q App')
    expect(clientName(req('/api/statuses/update.json', { 'user-agent': 'UA' }, 'status=x&source=Body+App'))).toBe('Body App')
    expect(clientName(req('/api/statuses/update.json?source=', { 'user-agent': 'Mozilla/5.0 Test' }))).toBe('Mozilla/5.0 Test')
    expect(clientName(req('/api/statuses/update.json'))).toBe('')
  })

  it('drops control characters and keeps at most 64 characters', () => {
    expect(clientName(req('/x?source=a%0D%0Ab%00c'))).toBe('a b c')
    const long = 'é'.repeat(100)
    expect(clientName(req('/x', { 'user-agent': long }))).toBe('é'.repeat(64))
  })

  it('names a client the same each time, however many other clients came between, and cleans long names too', () => {
    const ua = 'Tool/1.0\t(\u0007linux)  x'
    expect(clientName(req('/x', { 'user-agent': ua }))).toBe('Tool/1.0 ( linux) x')
    for (let i = 0; i < 2500; i++) expect(clientName(req('/x', { 'user-agent': `Other/${i}\u0000` }))).toBe(`Other/${i}`)
    expect(clientName(req('/x', { 'user-agent': ua }))).toBe('Tool/1.0 ( linux) x')
    const huge = `Big\u0001${'a'.repeat(600)}`
    expect(clientName(req('/x', { 'user-agent': huge }))).toBe(`Big ${'a'.repeat(60)}`)
    expect(clientName(req('/x', { 'user-agent': huge }))).toBe(`Big ${'a'.repeat(60)}`)
  })
})
