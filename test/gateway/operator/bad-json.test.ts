// Every operator API area reads a bad request body the same way (docs/gateway.md#the-operator-api-and-dashboard):
// a body that is not JSON is 400 `invalid_json`, another media type 415
// `unsupported_media_type`, a body over the limit 413 `body_too_large`, in the operator
// API's JSON, never cached, whichever area's route it was sent to; and nothing changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
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
        const res = await stack.gateway.operator.inject({
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
  const send = (route: (typeof writeRoutes)[number], contentType: string, payload: string) => stack.gateway.operator.inject({
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
