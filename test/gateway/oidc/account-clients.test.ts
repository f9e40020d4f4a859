// Relying parties a user registers on their own account pages (docs/oidc.md#registering-a-site),
// against a running stack: a confidential and a public client, the secret shown once,
// the code flow with PKCE by the independent `openid-client` library with the registered
// client, rotate and delete (each asked first, without script), another user kept out,
// CSRF, bad redirect URIs refused with nothing created, and the audit trail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDb } from '../../../src/common/sql.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { codeOf, csrfOf, hiddenField, WebClient } from '../provider/helpers.js'
import { browse, discover, oidc, startSignIn, type RegisteredClient } from './helpers.js'

let stack: Stack
let alice: { id: string; password: string }
let bob: { id: string; password: string }

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice')
  bob = await stack.addUser('bob', 'Bob')
})

afterAll(async () => {
  await stack?.close()
})


async function signedIn(user: { id: string; password: string }): Promise<WebClient> {
  const web = new WebClient(stack.url)
  const answer = await web.signIn('/account/login', user.id, user.password)
  expect(answer.status).toBe(303)
  return web
}

/** Registers through the form; the page the answer redirects to (or the answer itself, when it refused). */
async function register(web: WebClient, form: Record<string, string>) {
  const page = await web.get('/account/oidc-clients')
  expect(page.status).toBe(200)
  return web.postAndFollow('/account/oidc-clients', { csrf_token: csrfOf(page.text), ...form })
}

/** Signs `user` in to the site through the code flow with PKCE; the ID token's subject. */
async function signInWith(client: RegisteredClient, redirectUri: string, user: { id: string; password: string }) {
  const config = await discover(stack.url, client)
  const s = await startSignIn(config, redirectUri)
  const { callback } = await browse(s.url, redirectUri, user)
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce })
  return { tokens, config }
}

/** A code for `client` and the exchange attempted with `secret`: the error openid-client throws, or the tokens. */
async function exchangeWith(client: RegisteredClient, redirectUri: string, secret: string) {
  const config = await discover(stack.url, client)
  const s = await startSignIn(config, redirectUri)
  const { callback } = await browse(s.url, redirectUri, alice)
  const withSecret = await discover(stack.url, { ...client, client_secret: secret })
  return oidc.authorizationCodeGrant(withSecret, callback, { pkceCodeVerifier: s.verifier, expectedState: s.state, expectedNonce: s.nonce }).catch((e: unknown) => e)
}

function expectInvalidClient(e: unknown) {
  expect(e).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
  expect((e as oidc.WWWAuthenticateChallengeError).status).toBe(401)
  expect((e as oidc.WWWAuthenticateChallengeError).cause[0]!.parameters.error).toBe('invalid_client')
}

async function auditOf(target: string) {
  const r = await stack.admin<{ events: Array<{ action: string; kind: string; target: string; by: string; before: unknown; after: Record<string, unknown> | null }> }>('GET', `/admin/audit?kind=oidc&target=${target}`)
  expect(r.status).toBe(200)
  return r.body.events
}

describe('/account/oidc-clients', () => {
  it('is linked from the account page and asks a signed-out visitor to sign in', async () => {
    const anonymous = await new WebClient(stack.url).get('/account/oidc-clients')
    expect(anonymous.status).toBe(200)
    expect(anonymous.text).toContain('action="/account/login"')
    expect(hiddenField(anonymous.text, 'next')).toBe('/account/oidc-clients')
    const web = await signedIn(alice)
    const account = await web.get('/account')
    expect(account.text).toContain('href="/account/oidc-clients"')
    expect(account.text).toContain('href="/account/sites"')
    const page = await web.get('/account/oidc-clients')
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(page.text).not.toMatch(/<script/i)
    // The discovery document as a client library takes it: a whole URL of this deployment.
    expect(page.text).toContain(`discovery is at <code>${stack.url}/.well-known/openid-configuration</code>`)
  })

  it('registers a confidential client: client_id and secret shown once, stored sealed; openid-client signs in with it; rotate and delete asked first; all audited with the user', async () => {
    const web = await signedIn(alice)
    const redirectUri = 'https://diary.example/oidc/cb'
    const created = await register(web, { name: 'My diary', redirect_uris: `${redirectUri}\r\nhttps://diary.example/other-cb\r\n`, type: 'confidential' })
    expect(created.posted).toBe(303)
    expect(created.status).toBe(200)
    const client: RegisteredClient = { client_id: codeOf(created.text, 'client_id')!, client_secret: codeOf(created.text, 'client_secret')!, redirect_uris: [redirectUri] }
    expect(created.location).toBe(`/account/oidc-clients/${client.client_id}/new-secret`)
    expect(created.text).toContain('data-copy="client_id"')
    expect(client.client_id).toMatch(/^[A-Za-z0-9_-]{16,}$/)
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{32,}$/)
    expect(created.text).toContain('https://diary.example/other-cb')

    // Listed as alice's, without the secret; the operator sees alice as its owner.
    const list = await web.get('/account/oidc-clients')
    expect(list.text).toContain(client.client_id)
    expect(list.text).toContain('My diary')
    expect(list.text).not.toContain(client.client_secret)
    const shown = await stack.admin<Record<string, unknown>>('GET', `/admin/oidc-clients/${client.client_id}`)
    expect(shown.body).toMatchObject({ owner: 'alice', type: 'confidential', redirect_uris: [redirectUri, 'https://diary.example/other-cb'] })
    const db = await openDb({ dataDir: stack.config.dataDir })
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM kigo_gateway.oidc_clients WHERE client_id = $1', [client.client_id])
    expect(rows.length).toBe(1)
    expect(JSON.stringify(rows)).not.toContain(client.client_secret)
    await db.close()

    // The code flow with PKCE, by openid-client, with the user-registered client.
    const { tokens, config } = await signInWith(client, redirectUri, alice)
    expect(tokens.claims()!.sub).toBe('alice')
    expect(tokens.claims()!.aud).toBe(client.client_id)

    // Rotate: the list links to a confirmation page (no script); its form posts confirm=yes.
    expect(list.text).toContain(`href="/account/oidc-clients/${client.client_id}/rotate-secret"`)
    const ask = await web.get(`/account/oidc-clients/${client.client_id}/rotate-secret`)
    expect(ask.status).toBe(200)
    expect(ask.text).toContain(`action="/account/oidc-clients/${client.client_id}/rotate-secret"`)
    expect(hiddenField(ask.text, 'confirm')).toBe('yes')
    expect(ask.text).not.toMatch(/<script/i)
    // A post without the confirmation changes nothing: it shows the question again.
    const unconfirmed = await web.post(`/account/oidc-clients/${client.client_id}/rotate-secret`, { csrf_token: csrfOf(ask.text) })
    expect(unconfirmed.status).toBe(200)
    expect(unconfirmed.text).toContain('New client secret?')
    expect(codeOf(unconfirmed.text, 'client_secret')).toBeUndefined()
    const stillOld = await exchangeWith(client, redirectUri, client.client_secret!)
    expect((stillOld as oidc.TokenEndpointResponse).access_token).toBeTruthy()

    const rotated = await web.postAndFollow(`/account/oidc-clients/${client.client_id}/rotate-secret`, { csrf_token: csrfOf(ask.text), confirm: 'yes', overlap: '0' })
    expect(rotated.posted).toBe(303)
    expect(rotated.status).toBe(200)
    const newSecret = codeOf(rotated.text, 'client_secret')!
    expect(newSecret).toMatch(/^[A-Za-z0-9_-]{32,}$/)
    expect(newSecret).not.toBe(client.client_secret)
    expect(codeOf(rotated.text, 'client_id')).toBe(client.client_id)
    expect((await web.get('/account/oidc-clients')).text).not.toContain(newSecret)
    expectInvalidClient(await exchangeWith(client, redirectUri, client.client_secret!))
    const fresh = await exchangeWith(client, redirectUri, newSecret)
    expect((fresh as oidc.TokenEndpointResponse).access_token).toBeTruthy()

    // Delete, asked first: the client stops working (tokens, exchange, authorization).
    const askDelete = await web.get(`/account/oidc-clients/${client.client_id}/delete`)
    expect(askDelete.status).toBe(200)
    expect(hiddenField(askDelete.text, 'confirm')).toBe('yes')
    const notYet = await web.post(`/account/oidc-clients/${client.client_id}/delete`, { csrf_token: csrfOf(askDelete.text) })
    expect(notYet.status).toBe(200)
    expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).status).toBe(200)
    const deleted = await web.post(`/account/oidc-clients/${client.client_id}/delete`, { csrf_token: csrfOf(askDelete.text), confirm: 'yes' })
    expect(deleted.status).toBe(303)
    expect(deleted.headers.get('location')).toBe('/account/oidc-clients?notice=deleted')
    expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).status).toBe(404)
    expect((await web.get('/account/oidc-clients')).text).not.toContain(client.client_id)
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, 'alice').catch((e: unknown) => e)
    expect(userinfo).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
    const s = await startSignIn(config, redirectUri)
    const authorize = await fetch(s.url, { redirect: 'manual' })
    expect(authorize.status).toBe(400)
    expect(authorize.headers.get('location')).toBeNull()
    const token = await fetch(`${stack.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${newSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: redirectUri, code_verifier: 'x'.repeat(43) }).toString(),
    })
    expect(token.status).toBe(401)
    expect(((await token.json()) as { error: string }).error).toBe('invalid_client')

    const events = await auditOf(client.client_id)
    expect(events.map((e) => e.action).sort()).toEqual(['oidc_client.create', 'oidc_client.delete', 'oidc_client.rotate_secret'])
    for (const e of events) {
      expect(e.kind).toBe('oidc')
      expect(e.by).toBe('user alice')
    }
    expect(events.find((e) => e.action === 'oidc_client.create')!.after).toMatchObject({ client_id: client.client_id, owner: 'alice', type: 'confidential' })
    expect(JSON.stringify(events)).not.toContain(client.client_secret)
    expect(JSON.stringify(events)).not.toContain(newSecret)
  })

  it('registers a public client: no secret, nothing to rotate; PKCE alone signs in', async () => {
    const web = await signedIn(alice)
    const redirectUri = 'http://127.0.0.1:8766/cb'
    const created = await register(web, { name: 'Phone <app>', redirect_uris: redirectUri, type: 'public' })
    expect(created.posted).toBe(303)
    expect(created.status).toBe(200)
    expect(created.text).toContain('Phone &lt;app&gt;')
    expect(created.text).not.toContain('Phone <app>')
    const clientId = codeOf(created.text, 'client_id')!
    expect(clientId).toBeTruthy()
    expect(codeOf(created.text, 'client_secret')).toBeUndefined()
    expect(created.text).toContain('PKCE alone')
    const list = await web.get('/account/oidc-clients')
    expect(list.text).toContain(clientId)
    expect(list.text).not.toContain(`/account/oidc-clients/${clientId}/rotate-secret`)
    const rotate = await web.post(`/account/oidc-clients/${clientId}/rotate-secret`, { csrf_token: csrfOf(list.text), confirm: 'yes' })
    expect(rotate.status).toBe(409)
    expect(rotate.text).toContain('no secret to rotate')
    const { tokens } = await signInWith({ client_id: clientId, redirect_uris: [redirectUri] }, redirectUri, alice)
    expect(tokens.claims()!.sub).toBe('alice')
    const events = await auditOf(clientId)
    expect(events.map((e) => e.action)).toEqual(['oidc_client.create'])
    expect(events[0]!.by).toBe('user alice')
    expect(events[0]!.after).toMatchObject({ type: 'public', owner: 'alice' })
  })

  it('keeps each user to their own clients: another user gets 404 on every page and post, and changes nothing', async () => {
    const web = await signedIn(alice)
    const redirectUri = 'https://private.example/cb'
    const created = await register(web, { name: 'Alice private', redirect_uris: redirectUri, type: 'confidential' })
    const client: RegisteredClient = { client_id: codeOf(created.text, 'client_id')!, client_secret: codeOf(created.text, 'client_secret')!, redirect_uris: [redirectUri] }
    const eve = await signedIn(bob)
    const evePage = await eve.get('/account/oidc-clients')
    expect(evePage.status).toBe(200)
    expect(evePage.text).not.toContain(client.client_id)
    expect(evePage.text).not.toContain('Alice private')
    const secretPage = await eve.get(`/account/oidc-clients/${client.client_id}/new-secret`)
    expect(secretPage.status).toBe(404)
    expect(secretPage.text).not.toContain('Alice private')
    for (const action of ['rotate-secret', 'delete']) {
      const ask = await eve.get(`/account/oidc-clients/${client.client_id}/${action}`)
      expect(ask.status, action).toBe(404)
      expect(ask.text).not.toContain('Alice private')
      const post = await eve.post(`/account/oidc-clients/${client.client_id}/${action}`, { csrf_token: csrfOf(evePage.text), confirm: 'yes' })
      expect(post.status, action).toBe(404)
      expect(codeOf(post.text, 'client_secret')).toBeUndefined()
    }
    // An unknown or malformed client_id is the same 404.
    expect((await eve.post('/account/oidc-clients/no-such-client/delete', { csrf_token: csrfOf(evePage.text), confirm: 'yes' })).status).toBe(404)
    expect((await eve.get('/account/oidc-clients/%2E%2E/delete')).status).toBe(404)
    // Alice's client is untouched: her secret still works.
    expect((await stack.admin('GET', `/admin/oidc-clients/${client.client_id}`)).status).toBe(200)
    const still = await exchangeWith(client, redirectUri, client.client_secret!)
    expect((still as oidc.TokenEndpointResponse).access_token).toBeTruthy()
    expect((await auditOf(client.client_id)).map((e) => e.action)).toEqual(['oidc_client.create'])
  })

  it('refuses a post without the CSRF token (403) and a signed-out post, changing nothing', async () => {
    const web = await signedIn(alice)
    const created = await register(web, { name: 'Guarded', redirect_uris: 'https://guarded.example/cb', type: 'confidential' })
    const clientId = codeOf(created.text, 'client_id')!
    const before = (await stack.admin<{ clients: unknown[] }>('GET', '/admin/oidc-clients')).body.clients.length
    const noToken = await web.post('/account/oidc-clients', { name: 'Forged', redirect_uris: 'https://forged.example/cb', type: 'public' })
    expect(noToken.status).toBe(403)
    expect(noToken.text).toContain('Form expired')
    expect((await web.post('/account/oidc-clients', { csrf_token: 'wrong', name: 'Forged', redirect_uris: 'https://forged.example/cb', type: 'public' })).status).toBe(403)
    expect((await web.post(`/account/oidc-clients/${clientId}/rotate-secret`, { confirm: 'yes' })).status).toBe(403)
    expect((await web.post(`/account/oidc-clients/${clientId}/delete`, { confirm: 'yes' })).status).toBe(403)
    const stranger = new WebClient(stack.url)
    expect((await stranger.post(`/account/oidc-clients/${clientId}/delete`, { confirm: 'yes' })).status).toBe(403)
    expect((await stack.admin<{ clients: unknown[] }>('GET', '/admin/oidc-clients')).body.clients.length).toBe(before)
    expect((await stack.admin('GET', `/admin/oidc-clients/${clientId}`)).status).toBe(200)
    expect((await auditOf(clientId)).map((e) => e.action)).toEqual(['oidc_client.create'])
  })

  it('refuses bad redirect URIs and bad fields with a clear message, creating nothing', async () => {
    const web = await signedIn(bob)
    const count = async () => (await stack.admin<{ clients: unknown[] }>('GET', '/admin/oidc-clients?owner=bob')).body.clients.length
    const before = await count()
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ redirect_uris: 'not a url' }, /redirect URI must be an absolute http or https URL/],
      [{ redirect_uris: 'javascript:alert(1)' }, /redirect URI must use http or https/],
      [{ redirect_uris: 'ftp://files.example/cb' }, /redirect URI must use http or https/],
      [{ redirect_uris: 'https://site.example/cb#frag' }, /redirect URI must not have a fragment/],
      [{ redirect_uris: 'https://site.example/cb#' }, /redirect URI must not have a fragment/],
      [{ redirect_uris: 'https://good.example\\@evil.example/cb' }, /redirect URI must not contain a backslash/],
      [{ redirect_uris: 'https://good.example%5C@evil.example/cb' }, /redirect URI must not contain a backslash/],
      [{ redirect_uris: 'https://user:pass@site.example/cb' }, /redirect URI must not carry credentials/],
      [{ redirect_uris: 'https://user@site.example/cb' }, /redirect URI must not carry credentials/],
      [{ redirect_uris: 'https://good.example%40evil.example/cb' }, /redirect URI must not carry credentials/],
      [{ redirect_uris: 'https://site.example/c\tb' }, /redirect URI must not contain spaces, tabs, line breaks or other control characters/],
      [{ redirect_uris: 'https://site.example/c b' }, /redirect URI must not contain spaces/],
      [{ redirect_uris: 'https://site.example/cb\u0085' }, /redirect URI must not contain spaces/],
      [{ redirect_uris: 'https://site%00.example/cb' }, /redirect URI (must not have percent-encoded control characters in its host|must be an absolute http or https URL)/],
      [{ redirect_uris: 'https://ok.example/cb\nhttps://bad.example/cb#x' }, /redirect URI must not have a fragment: &quot;https:\/\/bad.example\/cb#x&quot;/],
      [{ redirect_uris: '' }, /at least one redirect URI/],
      [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://many.example/${i}`).join('\n') }, /Give 1 to 10 redirect URIs; nothing was registered/],
      [{ redirect_uris: 'https://site.example/cb', post_logout_redirect_uris: 'https://site.example/bye#x' }, /post-logout redirect URI must not have a fragment/],
      [{ redirect_uris: 'https://site.example/cb', type: 'secret' }, /confidential .* or public/],
      [{ redirect_uris: 'https://site.example/cb', name: '' }, /Give the client a name/],
      [{ redirect_uris: 'https://site.example/cb', name: 'x'.repeat(101) }, /name must be at most 100 characters/],
    ]
    for (const [form, message] of cases) {
      const answer = await register(web, { name: 'Bad', type: 'confidential', ...form })
      expect(answer.status, JSON.stringify(form)).toBe(400)
      expect(answer.text, JSON.stringify(form)).toMatch(message)
      expect(answer.text).toMatch(/role="alert"/)
      expect(codeOf(answer.text, 'client_id'), JSON.stringify(form)).toBeUndefined()
    }
    // A repeated field is not guessed at.
    const page = await web.get('/account/oidc-clients')
    const twice = await web.post('/account/oidc-clients', { csrf_token: csrfOf(page.text), name: 'Twice', type: 'public', redirect_uris: ['https://a.example/cb', 'https://b.example/cb'] })
    expect(twice.status).toBe(400)
    expect(await count()).toBe(before)
    // The operator API refuses the same spellings.
    for (const uri of ['https://good.example\\@evil.example/cb', 'https://good.example%40evil.example/cb', 'https://site.example/c\tb', 'https://site.example/cb\u0085']) {
      const r = await stack.admin<{ error: { code: string } }>('POST', '/admin/oidc-clients', { name: 'x', owner: 'bob', redirect_uris: [uri] })
      expect(r.status, uri).toBe(400)
      expect(r.body.error.code).toBe('invalid_redirect_uri')
    }
    expect(await count()).toBe(before)
  })
})
