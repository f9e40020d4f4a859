// The core believes only signed, fresh identities (docs/gateway.md#forwarding).
import { randomUUID } from 'node:crypto'
import { operationNameOf } from '../../../src/common/route-table.js'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { signIdentity, type Identity } from '../../../src/common/identity.js'
import { form, parseXml, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'
import { respelledSignature } from '../../helpers/signature-spelling.js'

let h: Harness
let entry: { id: string }

describeEachBackend('identity headers', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
    entry = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ status: 'hello' }) })).json()
  })
  afterAll(async () => {
    await h?.close()
  })

  async function expectUntouched(): Promise<void> {
    expect((await h.call({ url: `/api/statuses/show/${entry.id}.json` })).statusCode).toBe(200)
    expect(await h.store.hasStar(entry.id, 'mallory')).toBe(false)
  }

  test('an unsigned X-Kigo-User is 401 in format, even where anonymous access is fine', async () => {
    for (const [url, method] of [[`/api/statuses/destroy/${entry.id}.json`, 'POST'], [`/api/favorites/create/${entry.id}.json`, 'POST'], [`/api/statuses/show/${entry.id}.json`, 'GET']] as const) {
      const res = await h.call({ method, url, as: 'mallory', unsigned: true })
      expect(res.statusCode, url).toBe(401)
      expect(res.json()).toEqual({ error: { status: 401, code: 'invalid_identity', message: expect.any(String) } })
    }
    const xml = await h.call({ method: 'POST', url: `/api/statuses/destroy/${entry.id}.xml`, as: 'alice', unsigned: true })
    expect(xml.statusCode).toBe(401)
    expect(parseXml(xml.body).error).toMatchObject({ status: '401', code: 'invalid_identity' })
    await expectUntouched()
  })

  test('a stale signature is 401', async () => {
    const res = await h.call({ method: 'POST', url: `/api/favorites/create/${entry.id}.json`, as: 'mallory', signedAt: Date.now() - (h.config.core.identityMaxAgeSeconds + 5) * 1000 })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('invalid_identity')
    await expectUntouched()
  })

  test('a signature for another request, or with a changed user, is 401', async () => {
    const signed = signIdentity(h.key, { method: 'GET', url: `/api/statuses/show/${entry.id}.json`, host: h.domestic, requestId: randomUUID(), operation: operationNameOf('GET', `/api/statuses/show/${entry.id}.json`), bodySha256: '' }, { user: 'mallory', userName: 'M', authMethod: 'basic', consumer: '', scopes: [] })
    const replayed = await h.app.inject({ method: 'POST', url: `/api/favorites/create/${entry.id}.json`, headers: { host: h.domestic, ...signed } })
    expect(replayed.statusCode).toBe(401)
    const otherHost = await h.app.inject({ method: 'GET', url: `/api/statuses/show/${entry.id}.json`, headers: { host: h.global, ...signed } })
    expect(otherHost.statusCode).toBe(401)
    const changed = await h.app.inject({ method: 'GET', url: `/api/statuses/show/${entry.id}.json`, headers: { host: h.domestic, ...signed, 'x-kigo-user': 'alice' } })
    expect(changed.statusCode).toBe(401)
    const garbage = await h.app.inject({ method: 'GET', url: `/api/statuses/show/${entry.id}.json`, headers: { host: h.domestic, 'x-kigo-identity-signature': 'nonsense' } })
    expect(garbage.statusCode).toBe(401)
    await expectUntouched()
  })

  test('a signature respelled to decode to the same bytes is 401: only the spelling the gateway wrote is believed', async () => {
    const url = `/api/favorites/create/${entry.id}.json`
    const signed = signIdentity(h.key, { method: 'POST', url, host: h.domestic, requestId: randomUUID(), operation: operationNameOf('POST', url), bodySha256: '' }, { user: 'mallory', userName: 'M', authMethod: 'basic', consumer: '', scopes: [] })
    const respelled = respelledSignature(signed['x-kigo-identity-signature']!)
    const res = await h.app.inject({ method: 'POST', url, headers: { host: h.domestic, ...signed, 'x-kigo-identity-signature': respelled } })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('invalid_identity')
    await expectUntouched()
  })

  test('a reader named by their account session is shown on a page and runs no operation of the API', async () => {
    const reader: Identity = { user: 'alice', userName: 'Alice', authMethod: 'session', consumer: '', scopes: [] }
    const sign = (method: string, url: string) => signIdentity(h.key, { method, url, host: h.domestic, requestId: randomUUID(), operation: operationNameOf(method, url), bodySha256: '' }, reader)
    const page = await h.app.inject({ method: 'GET', url: '/', headers: { host: h.domestic, accept: 'text/html', ...sign('GET', '/') } })
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('Alice (alice)')
    expect(page.headers['cache-control']).toBe('private, no-cache')
    for (const [method, url] of [['GET', `/api/statuses/show/${entry.id}.json`], ['GET', '/api/statuses/friends_timeline.json'], ['POST', `/api/favorites/create/${entry.id}.json`]] as const) {
      const res = await h.app.inject({ method, url, headers: { host: h.domestic, ...sign(method, url) } })
      expect(res.statusCode, url).toBe(401)
      expect(res.json().error.code, url).toBe('invalid_identity')
    }
    expect(await h.store.hasStar(entry.id, 'alice')).toBe(false)
  })

  test('a valid signature without a user is an anonymous request', async () => {
    const res = await h.call({ url: `/api/statuses/show/${entry.id}.json` })
    expect(res.statusCode).toBe(200)
    expect(res.json().favorited).toBe(0)
    const write = await h.call({ method: 'POST', url: `/api/favorites/create/${entry.id}.json` })
    expect(write.statusCode).toBe(401)
    expect(write.json().error.code).toBe('authentication_required')
  })

  test('the core never looks at Authorization or X-WSSE', async () => {
    const res = await h.call({
      method: 'POST',
      url: `/api/favorites/create/${entry.id}.json`,
      headers: { authorization: `Basic ${Buffer.from('mallory:pw').toString('base64')}`, 'x-wsse': 'UsernameToken Username="mallory"' },
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('authentication_required')
    await expectUntouched()
  })

  test('the operation signed is the operation run: an identity signed for show cannot star (401)', async () => {
    const url = `/api/favorites/create/${entry.id}.json`
    const signed = signIdentity(h.key, { method: 'POST', url, host: h.domestic, requestId: randomUUID(), operation: 'statuses/show', bodySha256: '' }, { user: 'mallory', userName: 'M', authMethod: 'oauth', consumer: 'ck', scopes: ['write_public'] })
    const res = await h.app.inject({ method: 'POST', url, headers: { host: h.domestic, ...signed } })
    expect(res.statusCode).toBe(401)
    await expectUntouched()
  })

  test('defence in depth: an OAuth identity without write_public cannot write, whatever the gateway signed (403)', async () => {
    for (const scopes of [['read_public'], ['read_public', 'write_private'], []]) {
      const res = await h.call({ method: 'POST', url: `/api/favorites/create/${entry.id}.xml`, as: { user: 'mallory', scopes } })
      expect(res.statusCode, scopes.join(',')).toBe(403)
      expect(parseXml(res.body).error).toMatchObject({ status: '403', code: 'additional_authorization_required' })
    }
    const photo = await h.call({ method: 'POST', url: '/api/photos/create.json', as: { user: 'mallory', scopes: ['write_public'] } })
    expect(photo.statusCode).toBe(403)
    await expectUntouched()
  })

  test('a credential kind the operation does not accept is refused', async () => {
    const res = await h.call({ method: 'GET', url: '/applications/my.json', as: { user: 'mallory', authMethod: 'basic', scopes: [] } })
    // The core serves no applications/my: the identity is simply not one it would run anything for.
    expect([401, 404]).toContain(res.statusCode)
  })

  test('a signed write is single-use: the same signed request again, or with another body, is 401', async () => {
    const url = `/api/statuses/update.json`
    const body = 'status=once'
    const { createHash } = await import('node:crypto')
    const digest = createHash('sha256').update(body).digest('base64url')
    const signed = signIdentity(h.key, { method: 'POST', url, host: h.domestic, requestId: randomUUID(), operation: 'statuses/update', bodySha256: digest }, { user: 'mallory', userName: 'M', authMethod: 'basic', consumer: '', scopes: [] })
    const headers = { host: h.domestic, 'content-type': 'application/x-www-form-urlencoded', ...signed }
    const first = await h.app.inject({ method: 'POST', url, headers, payload: body })
    expect(first.statusCode).toBe(200)
    const again = await h.app.inject({ method: 'POST', url, headers, payload: body })
    expect(again.statusCode).toBe(401)
    const fresh = signIdentity(h.key, { method: 'POST', url, host: h.domestic, requestId: randomUUID(), operation: 'statuses/update', bodySha256: digest }, { user: 'mallory', userName: 'M', authMethod: 'basic', consumer: '', scopes: [] })
    const otherBody = await h.app.inject({ method: 'POST', url, headers: { ...headers, ...fresh }, payload: 'status=something+else' })
    expect(otherBody.statusCode).toBe(401)
    expect(otherBody.json().error.code).toBe('invalid_identity')
  })

  test('a multipart body under a signed digest: the signed one is posted, another is 401 and stores nothing', async () => {
    const { createHash } = await import('node:crypto')
    const { multipart } = await import('../helpers/harness.js')
    const url = '/api/statuses/update.json'
    const signedFor = (bytes: Buffer) =>
      signIdentity(h.key, { method: 'POST', url, host: h.domestic, requestId: randomUUID(), operation: 'statuses/update', bodySha256: createHash('sha256').update(bytes).digest('base64url') }, { user: 'mallory', userName: 'M', authMethod: 'basic', consumer: '', scopes: [] })
    const good = multipart([['status', 'signed multipart']])
    const ok = await h.app.inject({ method: 'POST', url, headers: { host: h.domestic, ...good.headers, ...signedFor(good.payload) }, payload: good.payload })
    expect(ok.statusCode).toBe(200)
    expect(ok.json().text).toBe('signed multipart')
    const other = multipart([['status', 'swapped body']])
    const swapped = await h.app.inject({ method: 'POST', url, headers: { host: h.domestic, ...other.headers, ...signedFor(good.payload) }, payload: other.payload })
    expect(swapped.statusCode).toBe(401)
    expect(swapped.json().error.code).toBe('invalid_identity')
  })

  test("a streamed multipart body under a client's SHA-1 oauth_body_hash (sha1: digest): the matching one is posted, another is 401", async () => {
    const { createHash } = await import('node:crypto')
    const { multipart } = await import('../helpers/harness.js')
    const url = '/api/statuses/update.json'
    const signedFor = (bytes: Buffer) =>
      signIdentity(h.key, { method: 'POST', url, host: h.domestic, requestId: randomUUID(), operation: 'statuses/update', bodySha256: `sha1:${createHash('sha1').update(bytes).digest('base64url')}` }, { user: 'mallory', userName: 'M', authMethod: 'oauth', consumer: 'ck', scopes: ['write_public'] })
    const good = multipart([['status', 'sha-1 hashed multipart']])
    const ok = await h.app.inject({ method: 'POST', url, headers: { host: h.domestic, ...good.headers, ...signedFor(good.payload) }, payload: good.payload })
    expect(ok.statusCode).toBe(200)
    const other = multipart([['status', 'swapped under sha-1']])
    const swapped = await h.app.inject({ method: 'POST', url, headers: { host: h.domestic, ...other.headers, ...signedFor(good.payload) }, payload: other.payload })
    expect(swapped.statusCode).toBe(401)
    expect(swapped.json().error.code).toBe('invalid_identity')
  })
})
