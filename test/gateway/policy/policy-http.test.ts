// The migration policy through a whole kigo on an injected clock (docs/gateway.md#the-migration-policy): changed
// with PUT /admin/policy, applied to verified Basic and WSSE requests (headers exactly
// when they should be, refusals in the request's format), never to OAuth, never to
// anonymous requests or to requests whose credentials failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { XMLParser } from 'fast-xml-parser'
import { startStack, type Stack } from '../../helpers/stack.js'
import { basicHeader, form, oauthHeader, wsseHeader, type OAuthClient } from './signers.js'

let clock = Date.parse('2027-01-04T08:00:00Z')
let stack: Stack
let alice: { api_password: string }
let bob: { api_password: string }
let oauth: OAuthClient
const guide = 'https://guide.example.net/move-to-oauth'

beforeAll(async () => {
  stack = await startStack({ now: () => clock, overrides: { migration: { guideUrl: guide } } })
  alice = await stack.addUser('alice', 'Alice')
  bob = await stack.addUser('bobby', 'Bob')
  oauth = await stack.addOAuthClient('alice', ['write_public'])
})

afterAll(async () => {
  await stack?.close()
})

const policyHeaders = ['deprecation', 'sunset', 'link'] as const

function headersOf(res: Response) {
  return Object.fromEntries(policyHeaders.map((h) => [h, res.headers.get(h)]))
}

async function post(headers: Record<string, string>, ext = 'json', status = 'hello') {
  return fetch(`${stack.url}/api/statuses/update.${ext}`, { method: 'POST', headers: { ...form, ...headers }, body: new URLSearchParams({ status }) })
}

const viaBasic = (ext = 'json') => post(basicHeader('alice', alice.api_password), ext)
const viaWsse = (user = 'alice', pw = alice.api_password) => post(wsseHeader(user, pw, clock))
const viaOAuth = () => post(oauthHeader(oauth, { url: `${stack.url}/api/statuses/update.json`, method: 'POST', data: { status: 'hello' } }, clock))

async function setPolicy(body: unknown) {
  const r = await stack.admin('PUT', '/admin/policy', body)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body as any
}

const noPolicyHeaders = { deprecation: null, sunset: null, link: null }

describe('policy over HTTP', () => {
  it('allows everything without headers by default', async () => {
    for (const res of [await viaBasic(), await viaWsse(), await viaOAuth()]) {
      expect(res.status).toBe(200)
      expect(headersOf(res)).toEqual(noPolicyHeaders)
    }
    const r = await stack.admin<any>('GET', '/admin/policy')
    expect(r.status).toBe(200)
    expect(r.body.basic.state).toBe('allow')
    expect(r.body.oauth1.state).toBe('allow')
    expect(r.body.oauth2).toEqual({ state: 'allow' })
    expect(r.body.guide_url).toBe(guide)
  })

  it('refuses bad policy input with 400 and a message, changing nothing', async () => {
    const bad: unknown[] = [
      [],
      {},
      { oauth: { state: 'deny' } },
      { basic: { state: 'off' } },
      { basic: { state: 'brownout' } },
      { basic: { state: 'deprecate', sunset: 'next tuesday' } },
      { basic: { state: 'deprecate', colour: 'red' } },
      { basic: { state: 'deny', exceptions: [{ until: '2027-02-01' }] } },
      { basic: { state: 'brownout', windows: [{ start: '25:00', end: '26:00' }] } },
    ]
    for (const body of bad) {
      const r = await stack.admin<any>('PUT', '/admin/policy', body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error).toMatchObject({ status: 400, code: 'invalid_parameter' })
      expect(r.body.error.message.length).toBeGreaterThan(10)
    }
    const raw = await fetch(`${stack.adminUrl}/admin/policy`, { method: 'PUT', headers: { authorization: `Bearer ${stack.config.adminToken}`, 'content-type': 'application/json' }, body: '{"basic":' })
    expect(raw.status).toBe(400)
    const unauthenticated = await fetch(`${stack.adminUrl}/admin/policy`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"basic":{"state":"deny"}}' })
    expect(unauthenticated.status).toBe(401)
    expect((await stack.admin<any>('GET', '/admin/policy')).body.basic.state).toBe('allow')
  })

  it('deprecate: Deprecation, Sunset and Link on Basic only; WSSE and OAuth untouched', async () => {
    const body = await setPolicy({ basic: { state: 'deprecate', sunset: '2027-06-30T00:00:00Z' } })
    expect(body.basic.effective).toMatchObject({ state: 'deprecate', refusing: false, deprecated_since: '2027-01-04T08:00:00Z' })
    clock += 60_000
    const basic = await viaBasic()
    expect(basic.status).toBe(200)
    expect(headersOf(basic)).toEqual({
      deprecation: `@${Date.parse('2027-01-04T08:00:00Z') / 1000}`,
      sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      link: `<${guide}>; rel="deprecation"; type="text/html"`,
    })
    expect(headersOf(await viaWsse())).toEqual(noPolicyHeaders)
    expect(headersOf(await viaOAuth())).toEqual(noPolicyHeaders)
  })

  it('brownout: accepted outside the windows, 403 inside in the request format; exceptions, failures, anonymous and OAuth as they were', async () => {
    await setPolicy({
      basic: { state: 'brownout', sunset: '2027-06-30T00:00:00Z', windows: [{ start: '09:00', end: '12:00' }, { start: '21:00', end: '24:00' }], exceptions: [{ user: 'bobby', until: '2027-01-05T00:00:00Z' }] },
    })
    clock = Date.parse('2027-01-04T08:59:00Z')
    const before = await viaBasic()
    expect(before.status).toBe(200)
    expect(before.headers.get('deprecation')).toBe(`@${Date.parse('2027-01-04T08:00:00Z') / 1000}`)

    clock = Date.parse('2027-01-04T09:30:00Z')
    const refused = await viaBasic()
    expect(refused.status).toBe(403)
    expect(refused.headers.get('link')).toBe(`<${guide}>; rel="deprecation"; type="text/html"`)
    // The window ends at 12:00: a client told to retry waits until then (2.5 hours).
    expect(refused.headers.get('retry-after')).toBe(String(2.5 * 3600))
    const error = (await refused.json()).error
    expect(error).toMatchObject({ status: 403, code: 'method_retired_temporarily' })
    expect(error.message).toContain(guide)

    const xml = await viaBasic('xml')
    expect(xml.status).toBe(403)
    expect(xml.headers.get('content-type')).toMatch(/^application\/xml/)
    const parsed = new XMLParser().parse(await xml.text())
    expect(parsed.error.code).toBe('method_retired_temporarily')
    expect(parsed.error.message).toContain(guide)

    const excepted = await post(basicHeader('bobby', bob.api_password))
    expect(excepted.status).toBe(200)
    expect(excepted.headers.get('link')).toContain(guide)

    // Failed credentials are answered by authentication: 401, no policy headers.
    const wrong = await post(basicHeader('alice', 'not-the-password'))
    expect(wrong.status).toBe(401)
    expect(headersOf(wrong)).toEqual(noPolicyHeaders)
    // Anonymous reads and OAuth are not legacy requests.
    const anonymous = await fetch(`${stack.url}/api/statuses/show/1.json`)
    expect(anonymous.status).toBe(200)
    expect(headersOf(anonymous)).toEqual(noPolicyHeaders)
    const viaOauth = await viaOAuth()
    expect(viaOauth.status).toBe(200)
    expect(headersOf(viaOauth)).toEqual(noPolicyHeaders)

    const view = (await stack.admin<any>('GET', '/admin/policy')).body.basic.effective
    expect(view).toMatchObject({ state: 'brownout', refusing: true, brownout_until: '2027-01-04T12:00:00Z' })

    clock = Date.parse('2027-01-04T12:00:00Z')
    expect((await viaBasic()).status).toBe(200)
    clock = Date.parse('2027-01-04T23:00:00Z')
    expect((await viaBasic()).status).toBe(403)
    // The exception has expired by the next day's window.
    clock = Date.parse('2027-01-05T09:00:00Z')
    expect((await post(basicHeader('bobby', bob.api_password))).status).toBe(403)
  })

  it('deny: 403 method_retired for WSSE, until an exception lets a user through; a user\'s client exception by source or User-Agent', async () => {
    clock = Date.parse('2027-01-06T10:00:00Z')
    const refusedClientAlone = await stack.admin('PUT', '/admin/policy', { wsse: { state: 'deny', exceptions: [{ client: 'OldBot/1', until: '2027-01-07T00:00:00Z' }] } })
    expect(refusedClientAlone.status).toBe(400)
    expect(JSON.stringify(refusedClientAlone.body)).toMatch(/self-declared/)
    await setPolicy({ wsse: { state: 'deny', exceptions: [{ user: 'alice', until: '2027-01-06T11:00:00Z' }, { user: 'bobby', client: 'OldBot/1', until: '2027-01-07T00:00:00Z' }] } })
    const allowed = await viaWsse()
    expect(allowed.status).toBe(200)
    expect(allowed.headers.get('deprecation')).toBe(`@${Date.parse('2027-01-06T10:00:00Z') / 1000}`)
    const refused = await viaWsse('bobby', bob.api_password)
    expect(refused.status).toBe(403)
    expect((await refused.json()).error.code).toBe('method_retired')
    const bySource = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('bobby', bob.api_password, clock) }, body: 'status=hi&source=OldBot%2F1' })
    expect(bySource.status).toBe(200)
    const byAgent = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('bobby', bob.api_password, clock), 'user-agent': 'OldBot/1' }, body: 'status=hi' })
    expect(byAgent.status).toBe(200)

    clock = Date.parse('2027-01-06T11:00:00Z')
    expect((await viaWsse()).status).toBe(403)
    // bobby's client exception is his: the same User-Agent from alice (anyone can send it) is refused.
    const sameAgent = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...wsseHeader('alice', alice.api_password, clock), 'user-agent': 'OldBot/1' }, body: 'status=hi' })
    expect(sameAgent.status).toBe(403)
    expect((await viaOAuth()).status).toBe(200)
  })

  it('a schedule takes effect by itself as the clock passes its dates', async () => {
    clock = Date.parse('2027-02-01T00:00:00Z')
    await setPolicy({
      basic: { state: 'allow', schedule: [{ state: 'deprecate', from: '2027-02-01T01:00:00Z' }, { state: 'deny', from: '2027-02-01T02:00:00Z' }] },
      wsse: { state: 'allow' },
    })
    const next = (await stack.admin<any>('GET', '/admin/policy')).body.basic.effective.next_change
    expect(next).toEqual({ state: 'deprecate', at: '2027-02-01T01:00:00Z' })

    expect(headersOf(await viaBasic())).toEqual(noPolicyHeaders)
    clock = Date.parse('2027-02-01T01:00:00Z')
    const deprecated = await viaBasic()
    expect(deprecated.status).toBe(200)
    expect(deprecated.headers.get('deprecation')).toBe(`@${Date.parse('2027-02-01T01:00:00Z') / 1000}`)
    // The scheduled deny is the sunset, though none was announced.
    expect(deprecated.headers.get('sunset')).toBe('Mon, 01 Feb 2027 02:00:00 GMT')
    clock = Date.parse('2027-02-01T02:00:00Z')
    expect((await viaBasic()).status).toBe(403)
    expect((await viaWsse()).status).toBe(200)
  })

  it('counts refusals as policy_denied', async () => {
    const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text()
    const denied = [...metrics.matchAll(/^kigo_auth_requests_total\{([^}]*)\} ([0-9.]+)$/gm)]
      .filter((m) => m[1]!.includes('outcome="policy_denied"'))
      .reduce((sum, m) => sum + Number(m[2]), 0)
    // Brownout: JSON, XML, the evening window, the expired exception; deny: bobby, alice
    // after her exception, alice with bobby's client; the schedule's deny.
    expect(denied).toBe(8)
  })
})
