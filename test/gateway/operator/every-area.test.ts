// What every area of the operator API answers the same way (docs/gateway.md#the-operator-api-and-dashboard):
// - a bad request body: not JSON is 400 `invalid_json`, another media type 415
//   `unsupported_media_type`, over the limit 413 `body_too_large`, in the operator API's
//   JSON, never cached, whichever area's route it was sent to; and nothing changes;
// - instants: UTC to the second (docs/api.md#objects), in every object of every area.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'

let stack: GatewayApp

beforeAll(async () => {
  stack = await gatewayApp()
  await stack.addUser('badjson')
})

afterAll(async () => {
  await stack?.close()
})

// One route of every area that accepts a body, and the area it belongs to.
const writeRoutes: Array<{ area: string; method: 'POST' | 'PUT' | 'DELETE'; url: string }> = [
  { area: 'users', method: 'POST', url: '/admin/users' },
  { area: 'users', method: 'PUT', url: '/admin/users/badjson/email' },
  { area: 'users', method: 'POST', url: '/admin/users/badjson/reset-password' },
  { area: 'applications', method: 'POST', url: '/admin/apps' },
  { area: 'tokens', method: 'POST', url: '/admin/tokens' },
  { area: 'user locks', method: 'PUT', url: '/admin/users/badjson/lock' },
  { area: 'user locks', method: 'DELETE', url: '/admin/users/badjson/lock' },
  { area: 'operator sessions', method: 'POST', url: '/admin/sessions/revoke' },
  { area: 'policy', method: 'PUT', url: '/admin/policy' },
  { area: 'OpenID Connect clients', method: 'POST', url: '/admin/oidc-clients' },
  { area: 'OpenID Connect keys', method: 'POST', url: '/admin/oidc/rotate-key' },
  { area: 'login sites', method: 'POST', url: '/admin/sites' },
  { area: 'unknown operator paths', method: 'POST', url: '/admin/nothing-here' },
]

const bodies: Array<[string, string]> = [
  ['a truncated object', '{"id": '],
  ['not JSON at all', 'id=bob'],
  ['an empty body', ''],
]

describe('a body that is not JSON, on every operator area', () => {
  for (const route of writeRoutes) {
    for (const [what, payload] of bodies) {
      it(`${route.method} ${route.url} (${route.area}), ${what}: 400 invalid_json`, async () => {
        const res = await stack.operator.inject({
          method: route.method,
          url: route.url,
          headers: { authorization: `Bearer ${stack.config.adminToken}`, 'content-type': 'application/json' },
          payload,
        })
        expect(res.statusCode, res.body).toBe(400)
        expect(res.headers['content-type']).toMatch(/^application\/json/)
        expect(res.headers['cache-control']).toBe('no-store')
        expect(JSON.parse(res.body)).toEqual({ error: { status: 400, code: 'invalid_json', message: expect.stringMatching(/JSON/) } })
      })
    }
  }
})

describe('a body of another media type or over the limit, on every operator area', () => {
  const send = (route: (typeof writeRoutes)[number], contentType: string, payload: string) => stack.operator.inject({
    method: route.method,
    url: route.url,
    headers: { authorization: `Bearer ${stack.config.adminToken}`, 'content-type': contentType },
    payload,
  })
  for (const route of writeRoutes) {
    it(`${route.method} ${route.url} (${route.area}): 415 unsupported_media_type, then 413 body_too_large`, async () => {
      const other = await send(route, 'application/x-www-form-urlencoded', 'id=bob')
      expect(other.statusCode, other.body).toBe(415)
      expect(other.headers['cache-control']).toBe('no-store')
      expect(JSON.parse(other.body)).toEqual({ error: { status: 415, code: 'unsupported_media_type', message: expect.stringMatching(/application\/json/) } })
      const large = await send(route, 'application/json', JSON.stringify({ id: 'x'.repeat(2 * 1024 * 1024) }))
      expect(large.statusCode, large.body).toBe(413)
      expect(JSON.parse(large.body)).toEqual({ error: { status: 413, code: 'body_too_large', message: expect.any(String) } })
    })
  }
})

describe('nothing changed', () => {
  it('the audit trail, where every operator change is recorded, holds only the user made before', async () => {
    const audit = await stack.admin<{ events: Array<{ action: string; target: string }> }>('GET', '/admin/audit')
    expect(audit.body.events.map((e) => [e.action, e.target])).toEqual([['user.create', 'badjson']])
    expect((await stack.admin('GET', '/admin/users/bob')).status).toBe(404)
  })
})

describe('instants, in every area', () => {
  const toTheSecond = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/
  it('users, applications, tokens, locks, login sites, OpenID Connect clients and the audit trail write UTC to the second', async () => {
    const user = await stack.admin<{ created_at: string }>('GET', '/admin/users/badjson')
    const created = await stack.admin<{ consumer_key: string }>('POST', '/admin/apps', { name: 'Timestamps', owner: 'badjson', scopes: ['read_public'] })
    const app = await stack.admin<{ created_at: string }>('GET', `/admin/apps/${created.body.consumer_key}`)
    await stack.admin('POST', '/admin/tokens', { consumer: created.body.consumer_key, user: 'badjson', scopes: ['read_public'] })
    const tokens = await stack.admin<{ tokens: Array<{ created_at: string }> }>('GET', '/admin/tokens?user=badjson')
    const lock = await stack.admin<{ locked_at: string }>('PUT', '/admin/users/badjson/lock', { reason: 'timestamps' })
    const site = await stack.admin<{ created_at: string }>('POST', '/admin/sites', { name: 'Timestamps', owner: 'badjson', callback: 'https://site.example/back' })
    const client = await stack.admin<{ created_at: string }>('POST', '/admin/oidc-clients', { name: 'Timestamps', owner: 'badjson', redirect_uris: ['https://client.example/cb'] })
    const audit = await stack.admin<{ events: Array<{ at: string }> }>('GET', '/admin/audit')
    const instants = {
      user: user.body.created_at,
      app: app.body.created_at,
      token: tokens.body.tokens[0]?.created_at,
      lock: lock.body.locked_at,
      site: site.body.created_at,
      client: client.body.created_at,
      audit: audit.body.events[0]?.at,
    }
    expect(instants).toEqual(Object.fromEntries(Object.keys(instants).map((what) => [what, expect.stringMatching(toTheSecond)])))
  })
})
