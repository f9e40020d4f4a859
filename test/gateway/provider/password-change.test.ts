// Changing the sign-in password on the account page, over HTTP: CSRF, the current
// password, the rule, and the other sessions ending while this one goes on.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { csrfOf, WebClient } from './helpers.js'

let stack: GatewayApp
let dana: { password: string }
beforeAll(async () => {
  stack = await gatewayApp()
  dana = await stack.addUser('dana', 'Dana')
})
afterAll(() => stack?.close())

async function signedIn(password: string): Promise<{ web: WebClient; csrf: string }> {
  const web = new WebClient(stack.url, stack.fetch)
  const res = await web.signIn('/account/login', 'dana', password)
  expect(res.status).toBe(303)
  return { web, csrf: csrfOf((await web.get('/account')).text) }
}

it('refuses a post without the CSRF token, a wrong current password, a mismatch and a weak password', async () => {
  const { web, csrf } = await signedIn(dana.password)
  const form = { current_password: dana.password, new_password: 'long enough phrase', confirm_password: 'long enough phrase' }
  expect((await web.post('/account/password', form)).status).toBe(403)
  const wrong = await web.post('/account/password', { ...form, csrf_token: csrf, current_password: 'nope nope nope' })
  expect(wrong.status).toBe(403)
  expect(wrong.text).toContain('Your current password is not right.')
  const mismatch = await web.post('/account/password', { ...form, csrf_token: csrf, confirm_password: 'something else' })
  expect(mismatch.status).toBe(400)
  expect(mismatch.text).toContain('The new password and its confirmation differ.')
  for (const [weak, message] of [['short', 'at least 10 characters'], ['xx-DANA-xx-yy', 'must not contain the user ID']]) {
    const res = await web.post('/account/password', { csrf_token: csrf, current_password: dana.password, new_password: weak!, confirm_password: weak! })
    expect(res.status).toBe(400)
    expect(res.text).toContain(message)
  }
  expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
})

it('changes the password and ends the other sessions only', async () => {
  const other = await signedIn(dana.password)
  const { web, csrf } = await signedIn(dana.password)
  const res = await web.post('/account/password', { csrf_token: csrf, current_password: dana.password, new_password: 'a new and long one', confirm_password: 'a new and long one' })
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe('/account?notice=password_changed#password')
  expect((await web.get('/account')).status).toBe(200)
  const gone = await other.web.get('/account')
  expect(gone.status).toBe(303)
  expect(gone.headers.get('location')).toMatch(/^\/account\/login/)
  await signedIn('a new and long one')
})
