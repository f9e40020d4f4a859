// The operator API for users, applications and tokens (docs/gateway.md#the-operator-api-and-dashboard) over a real embedded
// identity store, behind the admin bearer check.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminAuth } from '../../../src/gateway/operator/admin-auth.js'
import { adminApi, type AdminChange } from '../../../src/gateway/operator/admin-api.js'
import { oauth1AdminApi } from '../../../src/gateway/oauth1/admin-api.js'
import { gatewayMigrations } from '../../../src/gateway/schema.js'
import { openIdentityStore } from '../../../src/gateway/identity.js'
import type { IdentityStore } from '../../../src/gateway/store/types.js'
import errorAnswers from '../../../src/common/error-answers.js'
import { operatorErrors } from '../../../src/gateway/operator/errors.js'
import { embeddedDataDir } from '../../helpers/embedded-template.js'

const adminToken = randomBytes(24).toString('base64url')
const auth = { authorization: `Bearer ${adminToken}` }

let dir: string
let store: IdentityStore
let app: FastifyInstance
const changes: AdminChange[] = []

beforeAll(async () => {
  dir = embeddedDataDir('admin-api')
  store = await openIdentityStore({ migrations: gatewayMigrations, dataDir: dir, secretKey: randomBytes(32).toString('base64') })
  app = Fastify()
  await app.register(errorAnswers, operatorErrors)
  await app.register(adminAuth, { adminToken })
  await app.register(adminApi, { store, onChange: (c) => changes.push(c) })
  await app.register(oauth1AdminApi, { store, onChange: (c) => changes.push(c) })
  app.get('/healthz', async () => ({ ok: true }))
  await app.ready()
})

afterAll(async () => {
  await app?.close()
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function call(method: 'GET' | 'POST', url: string, payload?: unknown, extra: Partial<InjectOptions> = {}) {
  const res = await app.inject({ method, url, headers: { ...auth, ...(extra.headers ?? {}) }, ...(payload === undefined ? {} : { payload: payload as object }), ...omit(extra, 'headers') })
  return { status: res.statusCode, headers: res.headers, body: res.body ? JSON.parse(res.body) : undefined }
}

function omit<T extends object>(o: T, key: keyof T): Partial<T> {
  const { [key]: _, ...rest } = o
  return rest as Partial<T>
}

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.body).toEqual({ error: { status, code, message: expect.any(String) } })
  expect(res.body.error.message.length).toBeGreaterThan(5)
}

let userSeq = 0
const uniqueId = (prefix = 'user') => `${prefix}${++userSeq}_${randomBytes(3).toString('hex')}`

async function makeUser(id = uniqueId()) {
  const res = await call('POST', '/admin/users', { id })
  expect(res.status).toBe(201)
  return res.body as { id: string; name: string; password: string; api_password: string }
}

async function makeApp(owner: string, scopes = ['read_public', 'write_public'], callback?: string) {
  const res = await call('POST', '/admin/apps', { name: 'Test client', owner, scopes, ...(callback ? { callback } : {}) })
  expect(res.status).toBe(201)
  return res.body as { consumer_key: string; consumer_secret: string; name: string; scopes: string[] }
}

describe('admin bearer token', () => {
  it('refuses a request without Authorization with 401, a Bearer challenge and a JSON error', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/apps' })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="kigo-admin"')
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(res.body)).toEqual({ error: { status: 401, code: 'unauthorized', message: expect.stringMatching(/Bearer/) } })
  })

  it('refuses a wrong token, a token with extra characters, a prefix of it, and other schemes', async () => {
    for (const authorization of [
      'Bearer wrong-token-of-some-length',
      `Bearer ${adminToken}x`,
      `Bearer ${adminToken.slice(0, -1)}`,
      `Basic ${Buffer.from(`admin:${adminToken}`).toString('base64')}`,
      `${adminToken}`,
      'Bearer ',
    ]) {
      const res = await app.inject({ method: 'GET', url: '/admin/apps', headers: { authorization } })
      expect(res.statusCode, authorization).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Bearer realm="kigo-admin"')
      expect(JSON.parse(res.body).error.code).toBe('unauthorized')
    }
  })

  it('accepts the token with the scheme name in any case (RFC 9110 §11.1)', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/apps', headers: { authorization: `bearer ${adminToken}` } })
    expect(res.statusCode).toBe(200)
  })

  it('guards unknown /admin paths and encoded spellings too, and leaves other paths alone', async () => {
    expect((await app.inject({ method: 'GET', url: '/admin/nothing-here' })).statusCode).toBe(401)
    expect((await app.inject({ method: 'GET', url: '/admin' })).statusCode).toBe(401)
    expect((await app.inject({ method: 'POST', url: '/%61dmin/users', payload: { id: 'sneaky' } })).statusCode).toBe(401)
    expect(await store.getUser('sneaky')).toBeNull()
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
  })

  it('creates nothing when the token is wrong', async () => {
    const id = uniqueId()
    const res = await app.inject({ method: 'POST', url: '/admin/users', headers: { authorization: 'Bearer nope-nope-nope' }, payload: { id } })
    expect(res.statusCode).toBe(401)
    expect(await store.getUser(id)).toBeNull()
  })
})

describe('POST /admin/users', () => {
  it('refuses the names the public pages use (docs/api.md#pages), in any case, with a message naming them', async () => {
    for (const id of ['api', 'oauth', 'account', 'admin', 'Keyword', 'users', 'PHOTOS', 'applications', 'migration', 'healthz', 'readyz']) {
      const res = await call('POST', '/admin/users', { id })
      expectError(res, 400, res.body.error.code)
      expect(res.body.error.message).toContain('reserved')
      expect(await store.getUser(id)).toBeNull()
    }
    expect((await call('POST', '/admin/users', { id: 'api-fan' })).status).toBe(201)
  })

  it('creates a user with generated passwords, shown once, that are the stored ones', async () => {
    const id = uniqueId()
    const before = changes.length
    const res = await call('POST', '/admin/users', { id })
    expect(res.status).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(Object.keys(res.body).sort()).toEqual(['api_password', 'id', 'name', 'password'])
    expect(res.body.id).toBe(id)
    expect(res.body.name).toBe(id)
    expect(res.body.password).toMatch(/^[A-Za-z0-9_-]{24}$/)
    expect(res.body.api_password).toMatch(/^[A-Za-z0-9_-]{24}$/)
    expect(res.body.api_password).not.toBe(res.body.password)
    const stored = await store.getApiPassword(id)
    expect(stored?.apiPassword).toBe(res.body.api_password)
    expect((await store.verifyLoginPassword(id, res.body.password))?.id).toBe(id)
    expect(await store.verifyLoginPassword(id, res.body.api_password)).toBeNull()
    expect(changes.slice(before)).toEqual([{ kind: 'user', userId: id }])

    // Never shown again: reading the user returns no secret.
    const shown = await call('GET', `/admin/users/${id}`)
    expect(shown.status).toBe(200)
    expect(shown.body).toEqual({ id, name: id, email: null, email_pending: null, email_pending_until: null, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) })
  })

  it('uses the given name and login password', async () => {
    const id = uniqueId()
    const res = await call('POST', '/admin/users', { id, name: 'Hana Suzuki', password: 'correct horse battery' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id, name: 'Hana Suzuki', password: 'correct horse battery', api_password: expect.any(String) })
    expect((await store.verifyLoginPassword(id, 'correct horse battery'))?.name).toBe('Hana Suzuki')
    expect((await store.getApiPassword(id))?.apiPassword).toBe(res.body.api_password)
  })

  it('answers 409 for an existing user, also in another letter case, and keeps the first', async () => {
    const first = await makeUser()
    expectError(await call('POST', '/admin/users', { id: first.id, password: 'another-password' }), 409, 'user_exists')
    expectError(await call('POST', '/admin/users', { id: first.id.toUpperCase() }), 409, 'user_exists')
    expect((await store.verifyLoginPassword(first.id, first.password))?.id).toBe(first.id)
  })

  it('answers 400 naming the problem for invalid ids, wrong types and unknown fields', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ id: 'ab' }, /"id".*user ID/],
      [{ id: '1abc' }, /"id"/],
      [{ id: 'has space' }, /"id"/],
      [{ id: 'a'.repeat(33) }, /"id"/],
      [{ id: 123 }, /"id" must be a string/],
      [{}, /"id" is required/],
      [{ id: 'goodid', name: 42 }, /"name" must be a string/],
      [{ id: 'goodid', name: '' }, /"name" must not be empty/],
      [{ id: 'goodid', name: 'x'.repeat(101) }, /"name" must have at most 100/],
      [{ id: 'goodid', password: '' }, /"password" must not be empty/],
      [{ id: 'goodid', password: ['a'] }, /"password" must be a string/],
      [{ id: 'goodid', admin: true }, /unknown field "admin"/],
      [[{ id: 'goodid' }], /JSON object/],
      ['goodid', /JSON object/],
    ]
    for (const [payload, message] of cases) {
      const res = await call('POST', '/admin/users', undefined, { payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
      expectError(res, 400, 'invalid_parameter')
      expect(res.body.error.message, JSON.stringify(payload)).toMatch(message)
    }
    expect(await store.getUser('goodid')).toBeNull()
  })

  it('answers 400 for a control character in the name (refused by the store)', async () => {
    const id = uniqueId()
    const res = await call('POST', '/admin/users', { id, name: 'bad\u0001name' })
    expectError(res, 400, 'invalid_parameter')
    expect(await store.getUser(id)).toBeNull()
  })

  it('answers 4xx for malformed bodies: bad JSON, empty JSON, no body, other media types', async () => {
    const bad = await call('POST', '/admin/users', undefined, { payload: '{"id": "abc"', headers: { 'content-type': 'application/json' } })
    expectError(bad, 400, 'invalid_json')
    const empty = await call('POST', '/admin/users', undefined, { payload: '', headers: { 'content-type': 'application/json' } })
    expectError(empty, 400, 'invalid_json')
    expectError(await call('POST', '/admin/users'), 400, 'invalid_parameter')
    const text = await call('POST', '/admin/users', undefined, { payload: 'id=abc', headers: { 'content-type': 'text/plain' } })
    expectError(text, 400, 'invalid_parameter')
    const xml = await call('POST', '/admin/users', undefined, { payload: '<id>abc</id>', headers: { 'content-type': 'application/xml' } })
    expectError(xml, 415, 'unsupported_media_type')
    const proto = await call('POST', '/admin/users', undefined, { payload: '{"id":"protouser","__proto__":{"x":1}}', headers: { 'content-type': 'application/json' } })
    expect(proto.status).toBe(400)
    const big = await call('POST', '/admin/users', undefined, { payload: JSON.stringify({ id: 'bigbody', name: 'x'.repeat(70_000) }), headers: { 'content-type': 'application/json' } })
    expectError(big, 413, 'body_too_large')
  })
})

describe('GET /admin/users/:id', () => {
  it('answers 404 for an unknown user and 400 for an impossible id', async () => {
    expectError(await call('GET', '/admin/users/nobody_here'), 404, 'user_not_found')
    expectError(await call('GET', '/admin/users/x'), 400, 'invalid_parameter')
    expectError(await call('GET', `/admin/users/${encodeURIComponent('a b c')}`), 400, 'invalid_parameter')
  })
})

describe('login password rule and POST /admin/users/:id/reset-password', () => {
  it('refuses a login password shorter than 10 characters or containing the user ID', async () => {
    const id = uniqueId()
    const short = await call('POST', '/admin/users', { id, password: 'nine char' })
    expectError(short, 400, 'invalid_parameter')
    expect(short.body.error.message).toMatch(/at least 10 characters/)
    const withId = await call('POST', '/admin/users', { id, password: `my ${id} password` })
    expectError(withId, 400, 'invalid_parameter')
    expect(withId.body.error.message).toMatch(/must not contain the user ID/)
    expect(await store.getUser(id)).toBeNull()
  })

  it('sets a generated password shown once, ends the user\'s sessions, and 404s for an unknown user', async () => {
    const user = await makeUser()
    const s1 = await store.createWebSession({ userId: user.id, now: new Date(), expiresAt: new Date(Date.now() + 60_000) })
    const s2 = await store.createWebSession({ userId: user.id, now: new Date(), expiresAt: new Date(Date.now() + 60_000) })
    const res = await call('POST', `/admin/users/${user.id}/reset-password`)
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.body).toEqual({ id: user.id, password: expect.any(String), sessions_ended: 2 })
    expect(res.body.password.length).toBeGreaterThanOrEqual(10)
    expect(await store.verifyLoginPassword(user.id, user.password)).toBeNull()
    expect((await store.verifyLoginPassword(user.id, res.body.password))?.id).toBe(user.id)
    expect(await store.getWebSession(s1.id, new Date())).toBeNull()
    expect(await store.getWebSession(s2.id, new Date())).toBeNull()
    expectError(await call('POST', '/admin/users/nobody_here/reset-password'), 404, 'user_not_found')
  })
})

describe('POST /admin/users/:id/reset-api-password', () => {
  it('replaces the API password with a new generated one, returned once', async () => {
    const user = await makeUser()
    const before = changes.length
    const res = await call('POST', `/admin/users/${user.id}/reset-api-password`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: user.id, api_password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) })
    expect(res.body.api_password).not.toBe(user.api_password)
    expect((await store.getApiPassword(user.id))?.apiPassword).toBe(res.body.api_password)
    // The login password is untouched.
    expect((await store.verifyLoginPassword(user.id, user.password))?.id).toBe(user.id)
    expect(changes.slice(before)).toEqual([{ kind: 'api_password', userId: user.id }])
  })

  it('answers 404 for an unknown user and changes nothing', async () => {
    const before = changes.length
    expectError(await call('POST', '/admin/users/nobody_here/reset-api-password'), 404, 'user_not_found')
    expect(changes.length).toBe(before)
  })
})

describe('POST /admin/apps and GET /admin/apps', () => {
  it('registers an application and returns its key and secret, which are the stored ones', async () => {
    const owner = await makeUser()
    const before = changes.length
    const res = await call('POST', '/admin/apps', { name: 'Haiku Writer', owner: owner.id, scopes: ['write_public', 'read_public'], callback: 'https://app.example/cb?x=1' })
    expect(res.status).toBe(201)
    expect(Object.keys(res.body).sort()).toEqual(['consumer_key', 'consumer_secret', 'name', 'scopes'])
    expect(res.body.name).toBe('Haiku Writer')
    expect(res.body.scopes.sort()).toEqual(['read_public', 'write_public'])
    const stored = await store.getConsumer(res.body.consumer_key)
    expect(stored?.secret).toBe(res.body.consumer_secret)
    expect(stored?.consumer).toMatchObject({ ownerId: owner.id, callbackUrl: 'https://app.example/cb?x=1' })
    expect(changes.slice(before)).toEqual([{ kind: 'consumer', consumerKey: res.body.consumer_key }])

    const list = await call('GET', `/admin/apps?owner=${owner.id}`)
    expect(list.status).toBe(200)
    expect(list.body).toEqual({
      apps: [{
        consumer_key: res.body.consumer_key,
        name: 'Haiku Writer',
        owner: owner.id,
        scopes: expect.arrayContaining(['read_public', 'write_public']),
        callback: 'https://app.example/cb?x=1',
        home_page: null,
        created_at: expect.stringMatching(/Z$/),
      }],
    })
    expect(JSON.stringify(list.body)).not.toContain(res.body.consumer_secret)
  })

  it('lists every application without an owner filter, none of their secrets', async () => {
    const a = await makeApp((await makeUser()).id)
    const b = await makeApp((await makeUser()).id, ['read_private'])
    const list = await call('GET', '/admin/apps')
    expect(list.status).toBe(200)
    const keys = list.body.apps.map((x: { consumer_key: string }) => x.consumer_key)
    expect(keys).toEqual(expect.arrayContaining([a.consumer_key, b.consumer_key]))
    expect(list.body.apps.find((x: { consumer_key: string }) => x.consumer_key === b.consumer_key).callback).toBeNull()
    expect(JSON.stringify(list.body)).not.toContain(a.consumer_secret)
    expect(JSON.stringify(list.body)).not.toContain('secret')
  })

  it('answers 404 for an unknown owner, on create and on list', async () => {
    const res = await call('POST', '/admin/apps', { name: 'Orphan', owner: 'nobody_here', scopes: ['read_public'] })
    expectError(res, 404, 'user_not_found')
    expectError(await call('GET', '/admin/apps?owner=nobody_here'), 404, 'user_not_found')
  })

  it('answers 400 for missing, empty or unknown scopes, bad names and bad callbacks', async () => {
    const owner = (await makeUser()).id
    const before = (await store.listConsumers(owner)).length
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ name: 'A', owner }, 'invalid_parameter', /"scopes" is required/],
      [{ name: 'A', owner, scopes: [] }, 'invalid_parameter', /"scopes" must list at least 1/],
      [{ name: 'A', owner, scopes: ['admin'] }, 'invalid_parameter', /"scopes\[0\]" must be one of read_public, write_public, read_private, write_private/],
      [{ name: 'A', owner, scopes: 'read_public' }, 'invalid_parameter', /"scopes" must be an array/],
      [{ name: '', owner, scopes: ['read_public'] }, 'invalid_parameter', /"name" must not be empty/],
      [{ owner, scopes: ['read_public'] }, 'invalid_parameter', /"name" is required/],
      [{ name: 'A', owner: 'x', scopes: ['read_public'] }, 'invalid_parameter', /"owner"/],
      [{ name: 'A', owner, scopes: ['read_public'], callback: 'not a url' }, 'invalid_callback', /absolute http or https URL/],
      [{ name: 'A', owner, scopes: ['read_public'], callback: '/relative/cb' }, 'invalid_callback', /absolute/],
      [{ name: 'A', owner, scopes: ['read_public'], callback: 'ftp://files.example/cb' }, 'invalid_callback', /http or https/],
      [{ name: 'A', owner, scopes: ['read_public'], callback: 'javascript:alert(1)' }, 'invalid_callback', /http or https/],
      [{ name: 'A', owner, scopes: ['read_public'], callback: 42 }, 'invalid_parameter', /"callback"/],
    ]
    for (const [payload, code, message] of cases) {
      const res = await call('POST', '/admin/apps', payload)
      expectError(res, 400, code)
      expect(res.body.error.message, JSON.stringify(payload)).toMatch(message)
    }
    expect((await store.listConsumers(owner)).length).toBe(before)
  })

  it('rejects unknown query parameters with 400', async () => {
    expectError(await call('GET', '/admin/apps?user=someone'), 400, 'invalid_parameter')
  })
  it('drops the cached credentials of an application it edits, rotates or deletes, and of none when it refuses', async () => {
    const owner = (await makeUser()).id
    const { consumer_key: key } = await makeApp(owner)
    const send = async (method: 'PATCH' | 'POST' | 'DELETE', url: string, payload?: object) => {
      const before = changes.length
      const res = await app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) })
      return { status: res.statusCode, changes: changes.slice(before) }
    }
    const dropped = [{ kind: 'consumer', consumerKey: key }]
    expect(await send('PATCH', `/admin/apps/${key}`, { callback: 'javascript:alert(1)' })).toEqual({ status: 400, changes: [] })
    expect(await send('PATCH', `/admin/apps/${key}`, { name: 'Renamed' })).toEqual({ status: 200, changes: dropped })
    expect(await send('POST', `/admin/apps/${key}/rotate-secret`, { overlap_seconds: 5 })).toEqual({ status: 400, changes: [] })
    expect(await send('POST', `/admin/apps/${key}/rotate-secret`, { overlap_seconds: 0 })).toEqual({ status: 200, changes: dropped })
    expect(await send('DELETE', `/admin/apps/${key}`)).toEqual({ status: 200, changes: dropped })
    expect(await send('DELETE', `/admin/apps/${key}`)).toEqual({ status: 404, changes: [] })
    expect(await send('POST', `/admin/apps/${key}/rotate-secret`)).toEqual({ status: 404, changes: [] })
  })
})

describe('POST /admin/tokens, GET /admin/tokens, POST /admin/tokens/:token/revoke', () => {
  it('issues an access token within the registered scopes; its secret is the stored one', async () => {
    const owner = await makeUser()
    const user = await makeUser()
    const consumer = await makeApp(owner.id, ['read_public', 'write_public'])
    const before = changes.length
    const res = await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: user.id, scopes: ['write_public'] })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ token: expect.any(String), token_secret: expect.any(String), scopes: ['write_public'] })
    const stored = await store.getAccessToken(res.body.token)
    expect(stored?.secret).toBe(res.body.token_secret)
    expect(stored?.token).toMatchObject({ consumerKey: consumer.consumer_key, userId: user.id, scopes: ['write_public'], revokedAt: null })
    expect(changes.slice(before)).toEqual([{ kind: 'token', token: res.body.token }])
  })

  it('answers 400 for scopes beyond the application, 404 for an unknown consumer or user', async () => {
    const owner = await makeUser()
    const consumer = await makeApp(owner.id, ['read_public'])
    const beyond = await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: owner.id, scopes: ['read_public', 'write_private'] })
    expectError(beyond, 400, 'scope_not_registered')
    expect(beyond.body.error.message).toMatch(/write_private/)
    expectError(await call('POST', '/admin/tokens', { consumer: 'NoSuchConsumerKey1234', user: owner.id, scopes: ['read_public'] }), 404, 'consumer_not_found')
    expectError(await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: 'nobody_here', scopes: ['read_public'] }), 404, 'user_not_found')
    expectError(await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: owner.id, scopes: [] }), 400, 'invalid_parameter')
    expectError(await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: owner.id }), 400, 'invalid_parameter')
    expectError(await call('POST', '/admin/tokens', { consumer: 7, user: owner.id, scopes: ['read_public'] }), 400, 'invalid_parameter')
    expect(await store.listAccessTokens({ consumerKey: consumer.consumer_key })).toEqual([])
  })

  it('lists tokens by user and by consumer without secrets, and shows revocation', async () => {
    const owner = await makeUser()
    const user = await makeUser()
    const consumer = await makeApp(owner.id, ['read_public', 'write_public'])
    const t1 = (await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: user.id, scopes: ['read_public'] })).body
    const t2 = (await call('POST', '/admin/tokens', { consumer: consumer.consumer_key, user: owner.id, scopes: ['write_public', 'read_public'] })).body

    const byUser = await call('GET', `/admin/tokens?user=${user.id}`)
    expect(byUser.status).toBe(200)
    expect(byUser.body).toEqual({
      tokens: [{
        token: t1.token,
        consumer: consumer.consumer_key,
        user: user.id,
        scopes: ['read_public'],
        created_at: expect.stringMatching(/Z$/),
        revoked_at: null,
      }],
    })
    const byConsumer = await call('GET', `/admin/tokens?consumer=${consumer.consumer_key}`)
    expect(byConsumer.body.tokens.map((t: { token: string }) => t.token).sort()).toEqual([t1.token, t2.token].sort())
    expect(JSON.stringify(byConsumer.body)).not.toContain(t1.token_secret)
    expect(JSON.stringify(byConsumer.body)).not.toContain(t2.token_secret)

    const before = changes.length
    const revoked = await call('POST', `/admin/tokens/${t1.token}/revoke`)
    expect(revoked.status).toBe(200)
    expect(revoked.body).toEqual({ revoked: true })
    expect(changes.slice(before)).toEqual([{ kind: 'token', token: t1.token }])
    expect((await store.getAccessToken(t1.token))?.token.revokedAt).toBeInstanceOf(Date)
    expect((await store.getAccessToken(t2.token))?.token.revokedAt).toBeNull()
    const after = await call('GET', `/admin/tokens?user=${user.id}`)
    expect(after.body.tokens[0].revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    // Revoking again still succeeds.
    expect((await call('POST', `/admin/tokens/${t1.token}/revoke`)).body).toEqual({ revoked: true })
  })

  it('answers 404 for unknown users, consumers and tokens', async () => {
    expectError(await call('GET', '/admin/tokens?user=nobody_here'), 404, 'user_not_found')
    expectError(await call('GET', '/admin/tokens?consumer=NoSuchConsumerKey1234'), 404, 'consumer_not_found')
    expectError(await call('POST', '/admin/tokens/NoSuchTokenValue123456/revoke'), 404, 'token_not_found')
    expectError(await call('POST', `/admin/tokens/${encodeURIComponent('odd token!')}/revoke`), 404, 'token_not_found')
    expectError(await call('GET', '/admin/tokens?user=a&user=b'), 400, 'invalid_parameter')
  })
})

describe('bad input never gets a 5xx', () => {
  it('answers 4xx to assorted malformed requests on every route', async () => {
    const bodies = ['null', 'true', '1', '"x"', '[]', '{}', '{"a":', '\u0000', '{"id":null}', '{"scopes":[null]}', '{"name":{"x":1}}', '\uD800']
    const routes: Array<['GET' | 'POST', string]> = [
      ['POST', '/admin/users'],
      ['POST', '/admin/users/abc/reset-api-password'],
      ['POST', '/admin/apps'],
      ['POST', '/admin/tokens'],
      ['POST', '/admin/tokens/abc/revoke'],
    ]
    for (const [method, url] of routes) {
      for (const payload of bodies) {
        const res = await app.inject({ method, url, headers: { ...auth, 'content-type': 'application/json' }, payload })
        expect(res.statusCode, `${url} ${payload}`).toBeGreaterThanOrEqual(400)
        expect(res.statusCode, `${url} ${payload}`).toBeLessThan(500)
        expect(JSON.parse(res.body).error.status).toBe(res.statusCode)
      }
    }
    for (const url of ['/admin/users/%', '/admin/users/%E0%A4%A', '/admin/apps?owner=%', `/admin/users/${'a'.repeat(5000)}`, '/admin/tokens?consumer=']) {
      const res = await app.inject({ method: 'GET', url, headers: auth })
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400)
      expect(res.statusCode, url).toBeLessThan(500)
    }
  })
})

describe('store unavailable', () => {
  it('answers 503 with Retry-After and no internal detail (docs/operations.md#dependability)', async () => {
    const otherDir = embeddedDataDir('admin-api-down')
    const down = await openIdentityStore({ migrations: gatewayMigrations, dataDir: otherDir, secretKey: randomBytes(32).toString('base64') })
    const downApp = Fastify()
    await downApp.register(errorAnswers, operatorErrors)
    await downApp.register(adminAuth, { adminToken })
    await downApp.register(adminApi, { store: down })
    await downApp.register(oauth1AdminApi, { store: down })
    await down.close()
    try {
      const res = await downApp.inject({ method: 'POST', url: '/admin/users', headers: auth, payload: { id: 'someone' } })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('5')
      expect(JSON.parse(res.body)).toEqual({ error: { status: 503, code: 'store_unavailable', message: expect.not.stringMatching(/PGlite/) } })
    } finally {
      await downApp.close()
      rmSync(otherDir, { recursive: true, force: true })
    }
  })
})
