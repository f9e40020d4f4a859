// The account area over HTTP (docs/gateway.md#the-oauth-provider-and-the-account-pages): sessions and their cookies, CSRF on every form,
// sign-in throttling (docs/operations.md#throttling), registering applications, revoking authorized ones,
// and the API password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf, oauthChallenge, oauthFetch } from './helpers.js'
import { parseSetCookie } from '../../helpers/set-cookie.js'

let stack: Stack
let alice: { id: string; password: string; api_password: string }
let bob: { id: string; password: string; api_password: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice <Liddell>')
  bob = await stack.addUser('bob', 'Bob')
})

afterAll(async () => {
  await stack?.close()
})

async function signedIn(user = alice): Promise<WebClient> {
  const web = new WebClient(stack.url)
  const res = await web.signIn('/account/login', user.id, user.password)
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe('/account')
  return web
}

function basic(user: string, password: string): Record<string, string> {
  return { authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64') }
}

async function postEntry(headers: Record<string, string>) {
  const res = await fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: 'status=kigo%3Dhello',
  })
  await res.text()
  return res.status
}

describe('sessions', () => {
  it('sends a visitor of /account to the login form', async () => {
    const res = await new WebClient(stack.url).get('/account')
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/account/login?next=%2Faccount')
  })

  it('signs in with the login password, giving a new session id', async () => {
    const web = new WebClient(stack.url)
    const login = await web.get('/account/login')
    expect(login.status).toBe(200)
    const visitorId = web.cookies.get('kigo_session')
    expect(visitorId).toBeDefined()
    const res = await web.post('/account/login', { csrf_token: csrfOf(login.text), next: '/account', username: 'alice', password: alice.password })
    expect(res.status).toBe(303)
    const cookie = res.headers.getSetCookie()[0]!
    expect(parseSetCookie(cookie)).toEqual({ name: 'kigo_session', value: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/), attributes: { path: '/', 'max-age': '43200', httponly: true, samesite: 'Lax' } })
    expect(web.cookies.get('kigo_session')).not.toBe(visitorId)
    const account = await web.get('/account')
    expect(account.status).toBe(200)
    expect(account.text).toContain('Alice &lt;Liddell&gt; (alice)')
    expect(account.text).not.toContain('Alice <Liddell>')

    // The visitor session that was planted before sign-in is worth nothing now.
    const planted = new WebClient(stack.url)
    planted.cookies.set('kigo_session', visitorId!)
    expect((await planted.get('/account')).status).toBe(303)
  })

  it('refuses a wrong password with 403 and keeps the user ID in the form', async () => {
    const web = new WebClient(stack.url)
    const login = await web.get('/account/login')
    const res = await web.post('/account/login', { csrf_token: csrfOf(login.text), next: '/account', username: 'bob', password: 'wrong' })
    expect(res.status).toBe(403)
    expect(res.text).toContain('The user ID or password is not right.')
    expect(res.text).toContain('value="bob"')
    expect(web.cookies.has('kigo_session')).toBe(true)
    expect((await web.get('/account')).status).toBe(303)
  })

  it('refuses the API password as a login password', async () => {
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', 'bob', bob.api_password)).status).toBe(403)
  })

  it('refuses a login post without the form’s CSRF token (403)', async () => {
    const web = new WebClient(stack.url)
    await web.get('/account/login')
    const res = await web.post('/account/login', { next: '/account', username: 'alice', password: alice.password })
    expect(res.status).toBe(403)
    const noCookie = new WebClient(stack.url)
    expect((await noCookie.post('/account/login', { csrf_token: 'x', username: 'alice', password: alice.password })).status).toBe(403)
  })

  it('only sends the user on to local account or authorize pages', async () => {
    for (const next of ['https://evil.example/', '//evil.example/account', '/\\evil.example', '/api/statuses/update.json', '/account/../admin']) {
      const web = new WebClient(stack.url)
      const login = await web.get('/account/login')
      const res = await web.post('/account/login', { csrf_token: csrfOf(login.text), next, username: 'alice', password: alice.password })
      expect(res.status).toBe(303)
      expect(res.headers.get('location'), next).toBe('/account')
    }
  })

  it('signs out: the session is gone and the cookie cleared', async () => {
    const web = await signedIn()
    const account = await web.get('/account')
    const sessionId = web.cookies.get('kigo_session')!
    const out = await web.post('/account/logout', { csrf_token: csrfOf(account.text) })
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe('/account/login?notice=signed_out')
    expect(parseSetCookie(out.headers.getSetCookie()[0]!)).toMatchObject({ name: 'kigo_session', value: '', attributes: { path: '/', 'max-age': '0', httponly: true, samesite: 'Lax' } })
    const replayed = new WebClient(stack.url)
    replayed.cookies.set('kigo_session', sessionId)
    expect((await replayed.get('/account')).status).toBe(303)
    expect((await web.get(out.headers.get('location')!)).text).toContain('You are signed out.')
  })

  it('refuses sign-out without the CSRF token', async () => {
    const web = await signedIn()
    expect((await web.post('/account/logout', {})).status).toBe(403)
    expect((await web.get('/account')).status).toBe(200)
  })

  it('refuses a form post that is not urlencoded (415)', async () => {
    const web = await signedIn()
    const res = await fetch(`${stack.url}/account/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `kigo_session=${web.cookies.get('kigo_session')}` },
      body: JSON.stringify({ name: 'x' }),
    })
    expect(res.status).toBe(415)
  })
})

describe('registering applications', () => {
  it('registers an application and shows its consumer key and secret, which work at oauth/initiate', async () => {
    const web = await signedIn()
    const account = await web.get('/account')
    const res = await web.postAndFollow('/account/apps', {
      csrf_token: csrfOf(account.text),
      name: 'My <b>Client</b>',
      callback: 'https://client.example/cb',
      scope: ['read_public', 'write_public'],
    })
    // The page the answer redirects to shows the key and the secret (the only page that ever shows it).
    expect(res.posted).toBe(303)
    expect(res.status).toBe(200)
    const detail = res
    expect(detail.text).toContain('My &lt;b&gt;Client&lt;/b&gt;')
    const key = /<code id="consumer_key">([^<]+)<\/code>/.exec(detail.text)![1]!
    const secret = /<code class="secret" id="consumer_secret">([^<]+)<\/code>/.exec(detail.text)![1]!
    expect(detail.text).toContain('read_public, write_public')
    expect(detail.text).toContain('https://client.example/cb')

    const initiate = await oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer: { key, secret }, oauth: { oauth_callback: 'https://client.example/cb' }, form: { scope: 'write_public' } })
    expect(initiate.status, initiate.text).toBe(200)
    const elsewhere = await oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer: { key, secret }, oauth: { oauth_callback: 'https://other.example/cb' } })
    expect(elsewhere.status).toBe(400)

    const listed = await web.get('/account')
    expect(listed.text).toContain(`<a href="/account/apps/${key}">My &lt;b&gt;Client&lt;/b&gt;</a>`)
  })

  it('refuses an application without a name or scopes, or with a bad callback (400), keeping what was typed', async () => {
    const web = await signedIn()
    const csrf = csrfOf((await web.get('/account')).text)
    const noName = await web.post('/account/apps', { csrf_token: csrf, name: '  ', scope: 'read_public' })
    expect(noName.status).toBe(400)
    expect(noName.text).toContain('Give the application a name.')
    const noScope = await web.post('/account/apps', { csrf_token: csrf, name: 'Kept name' })
    expect(noScope.status).toBe(400)
    expect(noScope.text).toContain('Choose at least one scope.')
    expect(noScope.text).toContain('value="Kept name"')
    const badCallback = await web.post('/account/apps', { csrf_token: csrf, name: 'X', callback: 'javascript:alert(1)', scope: 'read_public' })
    expect(badCallback.status).toBe(400)
    expect(badCallback.text).toMatch(/callback/i)
    const unknownScope = await web.post('/account/apps', { csrf_token: csrf, name: 'X', scope: 'everything' })
    expect(unknownScope.status).toBe(400)
  })

  it('refuses registration posted without the CSRF token (403) and registers nothing', async () => {
    const web = await signedIn(bob)
    const res = await web.post('/account/apps', { name: 'Sneaky', scope: 'read_public' })
    expect(res.status).toBe(403)
    const apps = await stack.admin<{ apps?: Array<{ name: string }> }>('GET', '/admin/apps')
    expect(JSON.stringify(apps.body)).not.toContain('Sneaky')
  })

  it('shows the applications with access at the top, and the user\'s applications and the form below the contact e-mail; a refused registration shows that form once, as typed', async () => {
    const web = await signedIn()
    const account = await web.get('/account')
    const at = (page: string, id: string) => page.indexOf(`id="${id}"`)
    const order = ['authorized', 'api-password', 'password', 'contact', 'applications', 'register', 'login-sites', 'oidc-clients']
    expect(order.map((id) => at(account.text, id))).toEqual(order.map((id) => at(account.text, id)).sort((a, b) => a - b))
    expect(at(account.text, 'authorized')).toBeGreaterThan(0)

    const refused = await web.post('/account/apps', { csrf_token: csrfOf(account.text), name: 'Typed name', callback: 'https://typed.example/cb' })
    expect(refused.status).toBe(400)
    expect(refused.text.split('id="register"').length).toBe(2)
    const card = refused.text.slice(at(refused.text, 'register'), refused.text.indexOf('</section>', at(refused.text, 'register')))
    expect(card).toContain('<div class="error" role="alert">Choose at least one scope.</div>')
    expect(card).toContain('value="Typed name"')
    expect(card).toContain('value="https://typed.example/cb"')
    expect(at(refused.text, 'authorized')).toBeLessThan(at(refused.text, 'api-password'))
  })

  it('shows an application only to its owner', async () => {
    const web = await signedIn()
    const res = await web.postAndFollow('/account/apps', { csrf_token: csrfOf((await web.get('/account')).text), name: 'Alice only', scope: 'read_public' })
    const location = `/account/apps/${/<code id="consumer_key">([^<]+)<\/code>/.exec(res.text)![1]!}`
    const other = await signedIn(bob)
    const shown = await other.get(location)
    expect(shown.status).toBe(404)
    expect(shown.text).not.toContain('consumer_secret')
    expect((await new WebClient(stack.url).get(location)).status).toBe(303)
  })
})

describe('authorized applications', () => {
  it('lists the applications holding access tokens and revokes one, after which its tokens fail', async () => {
    const client = await stack.addOAuthClient('alice', ['read_public', 'write_public'])
    const access = { token: client.token, secret: client.tokenSecret }
    const consumer = { key: client.consumerKey, secret: client.consumerSecret }
    const sign = () => oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer, token: access, form: { status: 'kigo=still here' } })
    expect((await sign()).status).toBe(200)

    const web = await signedIn()
    const account = await web.get('/account')
    expect(account.text).toContain('app for alice')
    expect(account.text).toContain('Post and delete entries and add or remove stars for you')

    const noCsrf = await web.post('/account/revoke', { consumer_key: client.consumerKey })
    expect(noCsrf.status).toBe(403)
    expect((await sign()).status).toBe(200)

    // The button asks first: a confirmation page, nothing revoked yet.
    const asked = await web.post('/account/revoke', { csrf_token: csrfOf(account.text), consumer_key: client.consumerKey })
    expect(asked.status).toBe(200)
    expect(asked.text).toContain('Revoke app for alice?')
    expect(asked.text).toContain('<input type="hidden" name="confirm" value="yes">')
    expect((await sign()).status).toBe(200)
    const revoked = await web.post('/account/revoke', { csrf_token: csrfOf(asked.text), consumer_key: client.consumerKey, confirm: 'yes' })
    expect(revoked.status).toBe(303)
    const after = await web.get(revoked.headers.get('location')!)
    expect(after.text).toContain('Access was revoked.')
    expect(after.text).not.toContain(`value="${client.consumerKey}"`)

    const refused = await sign()
    expect(refused.status).toBe(401)
    expect(oauthChallenge(refused.headers).oauth_problem).toBe('token_revoked')
  })

  it('does not let one user revoke another user’s tokens', async () => {
    const client = await stack.addOAuthClient('bob', ['read_public', 'write_public'])
    const web = await signedIn()
    const res = await web.post('/account/revoke', { csrf_token: csrfOf((await web.get('/account')).text), consumer_key: client.consumerKey, confirm: 'yes' })
    expect(res.status).toBe(303)
    const still = await oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: { key: client.consumerKey, secret: client.consumerSecret }, token: { token: client.token, secret: client.tokenSecret }, form: { status: 'kigo=bob' } })
    expect(still.status).toBe(200)
  })
})

describe('API password', () => {
  it('shows the API password and resets it: the old one stops working, the new one works', async () => {
    const carol = await stack.addUser('carol', 'Carol')
    const web = await signedIn(carol)
    const account = await web.get('/account')
    expect(account.text).toContain(`<code class="secret" id="api_password">${carol.api_password}</code>`)
    expect(await postEntry(basic('carol', carol.api_password))).toBe(200)

    expect((await web.post('/account/api-password', {})).status).toBe(403)
    expect(await postEntry(basic('carol', carol.api_password))).toBe(200)

    const asked = await web.post('/account/api-password', { csrf_token: csrfOf(account.text) })
    expect(asked.status).toBe(200)
    expect(asked.text).toContain('Reset your API password?')
    expect(await postEntry(basic('carol', carol.api_password))).toBe(200)
    const reset = await web.post('/account/api-password', { csrf_token: csrfOf(asked.text), confirm: 'yes' })
    expect(reset.status).toBe(303)
    const after = await web.get(reset.headers.get('location')!)
    const fresh = /<code class="secret" id="api_password">([^<]+)<\/code>/.exec(after.text)![1]!
    expect(fresh).not.toBe(carol.api_password)
    expect(after.text).toContain('Your API password was reset.')
    expect(await postEntry(basic('carol', carol.api_password))).toBe(401)
    expect(await postEntry(basic('carol', fresh))).toBe(200)
  })

  it('without a mail server: a new contact e-mail cannot be confirmed, so the user is sent to the operator; the address can be removed (CSRF-protected)', async () => {
    const erin = await stack.addUser('erin', 'Erin')
    const web = await signedIn(erin)
    const account = await web.get('/account')
    expect(account.text).toContain('id="contact"')
    expect(account.text).toContain('This address receives migration notices')
    expect(account.text).toContain('password-reset links')
    expect(account.text).toContain('This service sends no mail: to set a new address, ask the operator of this service.')
    expect((await web.post('/account/email', { email: 'erin@example.com' })).status).toBe(403)
    const refused = await web.post('/account/email', { csrf_token: csrfOf(account.text), email: ' erin@example.com ' })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('Ask the operator of this service to set it; nothing was saved.')
    const emailOf = async () => (await stack.admin<{ users: Array<{ id: string; email: string | null }> }>('GET', '/admin/users')).body.users.find((u) => u.id === 'erin')?.email
    expect(await emailOf()).toBeNull()
    const bad = await web.post('/account/email', { csrf_token: csrfOf(account.text), email: 'not an address' })
    expect(bad.status).toBe(400)
    expect(bad.text).toContain('nothing was saved')

    // The operator's address is taken as given; the user may remove it.
    expect((await stack.admin('PUT', '/admin/users/erin/email', { email: 'erin@example.com' })).status).toBe(200)
    const after = await web.get('/account')
    expect(after.text).toContain('value="erin@example.com"')
    const cleared = await web.post('/account/email', { csrf_token: csrfOf(after.text), email: '', current_password: erin.password })
    expect(cleared.status).toBe(303)
    expect((await web.get(cleared.headers.get('location')!)).text).toContain('Your contact e-mail was removed.')
    expect(await emailOf()).toBeNull()
  })
})

describe('throttling and secure cookies', () => {
  let strict: Stack
  let dave: { password: string }

  beforeAll(async () => {
    strict = await startStack({ overrides: { publicScheme: 'https', auth: { throttle: { maxFailures: 3, windowSeconds: 300 } } } })
    dave = await strict.addUser('dave', 'Dave')
  })

  afterAll(async () => {
    await strict?.close()
  })

  it('marks the session cookie Secure when the public scheme is https', async () => {
    const res = await new WebClient(strict.url).get('/account/login')
    expect(parseSetCookie(res.headers.getSetCookie()[0]!).attributes).toMatchObject({ httponly: true, samesite: 'Lax', secure: true })
  })

  it('answers 429 with Retry-After after too many failed sign-ins, even with the right password', async () => {
    const web = new WebClient(strict.url)
    const login = await web.get('/account/login')
    const csrf = csrfOf(login.text)
    for (let i = 0; i < 3; i++) {
      expect((await web.post('/account/login', { csrf_token: csrf, username: 'dave', password: `wrong-${i}` })).status).toBe(403)
    }
    const right = await web.post('/account/login', { csrf_token: csrf, username: 'dave', password: dave.password })
    expect(right.status).toBe(429)
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(right.text).toContain('Too many failed sign-in attempts')
  })
})

describe('a forgotten password', () => {
  it('the sign-in page leads to what to do without mail: ask the operator of this service, in words the user can act on (no command)', async () => {
    const login = await fetch(`${stack.url}/account/login`)
    expect(await login.text()).toContain('<a href="/account/forgot">Forgot your password?</a>')
    const forgot = await fetch(`${stack.url}/account/forgot`)
    expect(forgot.status).toBe(200)
    const text = await forgot.text()
    expect(text).toContain('ask the operator of this service')
    expect(text).not.toContain('kigo users')
    expect(text).not.toContain('<code>')
  })
})

describe('an application\'s owner, and the audit trail of the user\'s own changes', () => {
  it('rotates the secret and deletes the application after confirming; each change is in the audit trail with the user', async () => {
    const fay = await stack.addUser('fayowner', 'Fay')
    const client = await stack.addOAuthClient('fayowner', ['read_public', 'write_public'])
    const consumer = { key: client.consumerKey, secret: client.consumerSecret }
    const token = { token: client.token, secret: client.tokenSecret }
    const sign = (c = consumer) => oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: c, token, form: { status: 'kigo=owner' } })
    expect((await sign()).status).toBe(200)
    const web = await signedIn(fay)
    const appPage = await web.get(`/account/apps/${consumer.key}`)
    expect(appPage.text).toContain(`action="/account/apps/${consumer.key}/rotate-secret"`)

    const asked = await web.post(`/account/apps/${consumer.key}/rotate-secret`, { csrf_token: csrfOf(appPage.text) })
    expect(asked.status).toBe(200)
    expect((await sign()).status).toBe(200)
    const rotated = await web.postAndFollow(`/account/apps/${consumer.key}/rotate-secret`, { csrf_token: csrfOf(asked.text), confirm: 'yes', overlap: '0' })
    expect(rotated.posted).toBe(303)
    expect(rotated.status).toBe(200)
    const after = rotated
    const secret = /<code class="secret" id="consumer_secret">([^<]+)<\/code>/.exec(after.text)![1]!
    expect(secret).not.toBe(consumer.secret)
    expect((await sign()).status).toBe(401)
    expect((await sign({ key: consumer.key, secret })).status).toBe(200)

    // Another user cannot touch it.
    const other = await signedIn()
    const refused = await other.post(`/account/apps/${consumer.key}/delete`, { csrf_token: csrfOf((await other.get('/account')).text), confirm: 'yes' })
    expect(refused.status).toBe(404)

    const deleted = await web.post(`/account/apps/${consumer.key}/delete`, { csrf_token: csrfOf(after.text), confirm: 'yes' })
    expect(deleted.status).toBe(303)
    expect((await sign({ key: consumer.key, secret })).status).toBe(401)
    expect((await web.get(`/account/apps/${consumer.key}`)).status).toBe(404)

    expect((await stack.admin('PUT', '/admin/users/fayowner/email', { email: 'fay@example.com' })).status).toBe(200)
    const account = await web.get('/account')
    const removed = await web.post('/account/email', { csrf_token: csrfOf(account.text), email: '', current_password: fay.password })
    expect(removed.status).toBe(303)

    const events = (await stack.admin<{ events: Array<{ by: string; action: string; target: string; before: unknown; after: unknown }> }>('GET', '/admin/audit?limit=20')).body.events
    // The user's own changes: the actor names the user (the operator's are by the operator).
    const mine = events.filter((e) => e.by === 'user fayowner' && (e.target === consumer.key || e.target === 'fayowner'))
    expect(mine.map((e) => e.action)).toEqual(['account.set_email', 'app.delete', 'app.rotate_secret'])
    expect(mine[0]).toMatchObject({ target: 'fayowner', before: { email: 'fay@example.com' }, after: { email: null } })
    expect(mine[1]!.before).toMatchObject({ user: 'fayowner', name: 'app for fayowner' })
    // Secrets never enter it.
    expect(JSON.stringify(events)).not.toContain(secret)

    // The dashboard shows who did it and what changed, not JSON.
    const dash = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })).text()
    const audit = dash.slice(dash.indexOf('id="audit-table"'))
    expect(audit).toContain('user fayowner (from')
    expect(audit).toContain('<li><strong>email</strong>: <del>&quot;fay@example.com&quot;</del> → <ins>null</ins></li>')
    expect(audit).toContain('consumer secret rotated')
  })
})

describe('the user\'s own changes in the audit trail', () => {
  it('password change and API password reset are recorded with the user, without secrets', async () => {
    const gus = await stack.addUser('gusaudit', 'Gus')
    const web = await signedIn(gus)
    let account = await web.get('/account')
    const changed = await web.post('/account/password', { csrf_token: csrfOf(account.text), current_password: gus.password, new_password: 'gus has a long password', confirm_password: 'gus has a long password' })
    expect(changed.status).toBe(303)
    account = await web.get('/account')
    expect((await web.post('/account/api-password', { csrf_token: csrfOf(account.text), confirm: 'yes' })).status).toBe(303)
    const events = (await stack.admin<{ events: Array<{ action: string; target: string; before: unknown; after: unknown }> }>('GET', '/admin/audit?target=gusaudit')).body.events
    expect(events.map((e) => e.action)).toEqual(['account.reset_api_password', 'account.change_password', 'user.create'])
    expect(JSON.stringify(events)).not.toContain('gus has a long password')
    const text = await (await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })).text()
    expect(text).toContain('sign-in password changed')
  })
})
