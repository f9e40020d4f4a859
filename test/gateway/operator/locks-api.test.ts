// PUT and DELETE /admin/users/{id}/lock validate their path and body with the operator
// API's schemas (docs/operations.md#user-locks): a bad user ID, an unknown field, a reason
// of the wrong type or of several lines is a 400 naming the field, and locks nobody.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'

let gw: GatewayApp

beforeAll(async () => {
  gw = await gatewayApp()
  await gw.addUser('lockme', 'Lock Me')
})
afterAll(() => gw?.close())

const errorOf = (body: unknown) => (body as { error: { status: number; code: string; message: string } }).error

describe('the user locks API', () => {
  it('refuses a bad body or path with a 400 naming the field, and locks nobody', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['/admin/users/lockme/lock', { reason: 'a\nb' }, /"reason" must be one line of 1 to 500 characters/],
      ['/admin/users/lockme/lock', { reason: '   ' }, /"reason" must be one line/],
      ['/admin/users/lockme/lock', { reason: 7 }, /"reason" must be a string/],
      ['/admin/users/lockme/lock', { reason: 'x'.repeat(501) }, /"reason" must be one line/],
      ['/admin/users/lockme/lock', { reason: 'ok', until: 'tomorrow' }, /unknown field "until"/],
      ['/admin/users/lockme/lock', ['reason'], /must be a JSON object/],
      ['/admin/users/no%20one/lock', { reason: 'ok' }, /"id" must be a user ID/],
    ]
    for (const [path, body, message] of cases) {
      const res = await gw.admin('PUT', path, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(errorOf(res.body)).toMatchObject({ code: 'invalid_parameter', message: expect.stringMatching(message) })
    }
    const bad = await gw.admin('DELETE', '/admin/users/x/lock')
    expect(bad.status).toBe(400)
    expect(errorOf(bad.body).message).toMatch(/"id" must be a user ID/)
    expect((await gw.admin('DELETE', '/admin/users/lockme/lock')).body).toMatchObject({ id: 'lockme', locked: false, was_locked: false })
  })

  it('locks with the reason given, or the default without a body, and unlocks', async () => {
    const given = await gw.admin('PUT', '/admin/users/lockme/lock', { reason: ' guessing from a botnet ' })
    expect(given.status).toBe(200)
    expect(given.body).toMatchObject({ id: 'lockme', locked: true, reason: 'guessing from a botnet' })
    expect((await gw.admin('DELETE', '/admin/users/lockme/lock')).body).toMatchObject({ locked: false, was_locked: true })
    const plain = await gw.admin('PUT', '/admin/users/lockme/lock')
    expect(plain.body).toMatchObject({ locked: true, reason: 'locked by the operator' })
    const unknown = await gw.admin('PUT', '/admin/users/nosuchuser/lock', {})
    expect(unknown.status).toBe(404)
  })
})
