// A form field given twice (docs/security.md#forms): refused with 400 by every page of the
// account area and the operator dashboard, before the page reads it, so that no page takes one copy for the value or
// the field for absent (a repeated `overlap` once meant "none"). Checkboxes (`scope`)
// may repeat. HTTP requests to the gateway's apps (test/helpers/gateway-app.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { WebClient, csrfOf } from '../provider/helpers.js'
import { formHeaders } from '../../helpers/dashboard.js'

let stack: GatewayApp
let web: WebClient
let csrf: string
let user: { id: string; password: string }

beforeAll(async () => {
  stack = await gatewayApp()
  user = await stack.addUser('rhea')
  web = new WebClient(stack.url, stack.fetch)
  expect((await web.signIn('/account/login', user.id, user.password)).status).toBe(303)
  csrf = csrfOf((await web.get('/account')).text)
}, 60_000)

afterAll(async () => {
  await stack?.close()
})

const auditActions = async () => (await stack.admin<{ events: Array<{ action: string }> }>('GET', '/admin/audit?target=rhea&limit=100')).body.events.map((e) => e.action)

describe('a repeated form field', () => {
  it('rotating a secret with `overlap` given twice is 400 and rotates nothing', async () => {
    const app = await stack.addOAuthClient('rhea', ['read_public'])
    const res = await web.post(`/account/apps/${app.consumerKey}/rotate-secret`, { csrf_token: csrf, confirm: 'yes', overlap: ['86400', '0'] })
    expect(res.status).toBe(400)
    expect(res.text).toContain('The field “overlap” is given more than once')
    const events = (await stack.admin<{ events: Array<{ action: string; target: string }> }>('GET', `/admin/audit?target=${app.consumerKey}`)).body.events
    expect(events.map((e) => e.action)).not.toContain('app.rotate_secret')
  })

  it('is 400 on every account form, whichever field repeats, and changes nothing', async () => {
    const before = await auditActions()
    const posts: Array<[string, Record<string, string | string[]>]> = [
      ['/account/login', { csrf_token: csrf, username: [user.id, 'someone-else'], password: user.password }],
      ['/account/password', { csrf_token: csrf, current_password: user.password, new_password: ['a long new password 1', 'another one 22'], confirm_password: 'a long new password 1' }],
      ['/account/email', { csrf_token: csrf, email: ['rhea@example.test', 'thief@example.test'], current_password: user.password }],
      ['/account/api-password', { csrf_token: [csrf, csrf], confirm: 'yes' }],
      ['/account/apps', { csrf_token: csrf, name: ['One', 'Two'], scope: 'read_public' }],
    ]
    for (const [path, form] of posts) {
      const res = await web.post(path, form)
      expect(res.status, path).toBe(400)
      expect(res.text, path).toContain('is given more than once')
    }
    expect(await auditActions()).toEqual(before)
  })

  it('a checkbox field may repeat: an application with two scopes is registered', async () => {
    const res = await web.post('/account/apps', { csrf_token: csrf, name: 'Two scopes', scope: ['read_public', 'write_public'] })
    expect(res.status).toBeLessThan(400)
  })

  it('the dashboard\'s sign-in with the token given twice is 400, and no session is made', async () => {
    const body = new URLSearchParams([['token', 'not-the-token'], ['token', stack.config.adminToken]])
    const res = await stack.fetch(`${stack.adminUrl}/admin/login`, { method: 'POST', headers: formHeaders, body, redirect: 'manual' })
    await res.arrayBuffer()
    expect(res.status).toBe(400)
    expect(res.headers.get('set-cookie')).toBeNull()
  })
})
