// The token exchange from OAuth 1.0a to OAuth 2.0 (docs/oauth2.md#for-an-oauth-10a-application)
// against a running stack: an OAuth 1.0a application turns OAuth 2.0 on through the operator
// API, and its OAuth 2.0 client trades the application's access tokens at the token endpoint,
// signed by the npm `oauth-1.0a` client with the OAuth 1.0a parameters in the form body.
// Then the attacker's side: another application's token, a wrong token secret, a revoked
// token, a replayed signature, wider scopes, a public client, the same token twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt } from 'jose'
import { openDb } from '../../../src/common/sql.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { oauth1aClient } from '../../helpers/oauth1a.js'
import { WebClient, csrfOf } from '../provider/helpers.js'
import { bearer, issueOAuth1Token, registerExchangeApp, signedExchangeBody, tokenPost, type ExchangeApp, type OAuth1Token } from './helpers.js'

type App = ExchangeApp

let stack: Stack
let alice: { id: string; password: string }
let bobby: { id: string; password: string }
let glass: App
let other: App
let phone: App
let tokenEndpoint: string

const registerApp = (name: string, owner: string, scopes: string[], o: { public?: boolean } = {}) => registerExchangeApp(stack, name, owner, scopes, o)
const issueToken = (app: App, user: string, scopes: string[]) => issueOAuth1Token(stack, app, user, scopes)
const signedBody = (signer: { key: string; secret: string }, token: OAuth1Token, extra: Record<string, string> = {}, subject = token.token) => signedExchangeBody(tokenEndpoint, signer, token, extra, subject)
const post = (app: App, body: Record<string, string>, o: { clientSecret?: string } = {}) => tokenPost(tokenEndpoint, app, body, o)
const exchange = (app: App, token: OAuth1Token, extra: Record<string, string> = {}) => post(app, signedBody(app, token, extra))

/** An API call signed with the OAuth 1.0a token (the header form). */
async function oauth1Call(app: App, token: OAuth1Token, path: string): Promise<number> {
  const url = `${stack.url}${path}`
  const c = oauth1aClient({ key: app.key, secret: app.secret })
  const res = await fetch(url, { headers: { ...c.toHeader(c.authorize({ url, method: 'GET' }, { key: token.token, secret: token.secret })) } })
  return res.status
}

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice Liddell')
  bobby = await stack.addUser('bobby', 'Bob')
  tokenEndpoint = `${stack.url}/oidc/token`
  glass = await registerApp('Looking Glass', 'bobby', ['read_public', 'write_public'])
  other = await registerApp('Other App', 'bobby', ['read_public', 'write_public'])
  phone = await registerApp('Phone App', 'bobby', ['read_public'], { public: true })
})

afterAll(async () => {
  await stack?.close()
})

describe('turning OAuth 2.0 on', () => {
  it('gives an application a client of its name, owner and scopes, its callback as redirect URI, the secret shown once', async () => {
    const a = await stack.admin<{ consumer_key: string }>('POST', '/admin/apps', { name: 'Tea Party', owner: 'bobby', scopes: ['read_public'], callback: 'https://tea.example/cb' })
    const on = await stack.admin<Record<string, unknown>>('POST', `/admin/apps/${a.body.consumer_key}/oauth2`)
    expect(on.status).toBe(201)
    expect(on.body).toMatchObject({ consumer_key: a.body.consumer_key, name: 'Tea Party', owner: 'bobby', scopes: ['read_public'], type: 'confidential', redirect_uris: ['https://tea.example/cb'] })
    expect(typeof on.body.client_secret).toBe('string')
    const client = await stack.admin<Record<string, unknown>>('GET', `/admin/oidc-clients/${on.body.client_id as string}`)
    expect(client.body).toMatchObject({ name: 'Tea Party', owner: 'bobby', api_scopes: ['read_public'], redirect_uris: ['https://tea.example/cb'] })
    expect(client.body).not.toHaveProperty('client_secret')
    // Once per application; an unknown application, an application without callback and no redirect URI, a bad URI: refused.
    expect((await stack.admin('POST', `/admin/apps/${a.body.consumer_key}/oauth2`)).status).toBe(409)
    expect((await stack.admin('POST', '/admin/apps/nope/oauth2')).status).toBe(404)
    const bare = await stack.admin<{ consumer_key: string }>('POST', '/admin/apps', { name: 'Bare', owner: 'bobby', scopes: ['read_public'] })
    expect((await stack.admin<{ error: { code: string } }>('POST', `/admin/apps/${bare.body.consumer_key}/oauth2`)).body.error.code).toBe('invalid_redirect_uri')
    expect((await stack.admin('POST', `/admin/apps/${bare.body.consumer_key}/oauth2`, { redirect_uri: 'javascript:alert(1)' })).status).toBe(400)
    expect((await stack.admin('POST', `/admin/apps/${bare.body.consumer_key}/oauth2`, { redirect_uri: 'https://bare.example/cb', extra: 1 })).status).toBe(400)
  })
})

describe('turning OAuth 2.0 on from the application\'s account page', () => {
  it('the owner posts the form and sees the client_id and client secret once; the client exchanges with that secret', async () => {
    const a = await stack.admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name: 'Hatter', owner: 'bobby', scopes: ['read_public'], callback: 'https://hatter.example/cb' })
    const key = a.body.consumer_key
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', bobby.id, bobby.password)).status).toBe(303)
    expect((await web.get(`/account/apps/${key}`)).text).toContain(`href="/account/apps/${key}/oauth2"`)
    const form = await web.get(`/account/apps/${key}/oauth2`)
    expect(form.status).toBe(200)
    expect(form.text).toContain('value="https://hatter.example/cb"')
    // No CSRF token: refused, nothing made.
    expect((await web.post(`/account/apps/${key}/oauth2`, { redirect_uri: 'https://hatter.example/cb', type: 'confidential' })).status).toBe(403)
    const posted = await web.post(`/account/apps/${key}/oauth2`, { csrf_token: csrfOf(form.text), redirect_uri: 'https://hatter.example/cb', type: 'confidential' })
    expect(posted.status).toBe(303)
    const location = posted.headers.get('location')!
    expect(location).toMatch(/^\/account\/oidc-clients\/[A-Za-z0-9_-]+\/new-secret$/)
    const clientId = location.split('/')[3]!
    const shown = await web.get(location)
    expect(shown.text).toContain(clientId)
    const secret = /<code class="secret" id="client_secret">([^<]+)</.exec(shown.text)?.[1]
    expect(secret).toBeTruthy()
    expect((await web.get(location)).text).not.toContain(secret!)
    // Turned on once: the page says so.
    expect((await web.get(`/account/apps/${key}/oauth2`)).text).toContain(`OAuth 2.0 is on for this application: its client is <code>${clientId}</code>`)
    const app: App = { key, secret: a.body.consumer_secret, clientId, clientSecret: secret!, name: 'Hatter' }
    const r = await exchange(app, await issueToken(app, 'alice', ['read_public']))
    expect(r.status).toBe(200)
    expect(decodeJwt(r.body.access_token as string)).toMatchObject({ sub: 'alice', client_id: clientId, scope: 'read_public' })
  })

  it('is not offered to anyone but the owner', async () => {
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const page = await web.get(`/account/apps/${glass.key}/oauth2`)
    expect(page.status).toBe(404)
    const account = await web.get('/account')
    expect((await web.post(`/account/apps/${glass.key}/oauth2`, { csrf_token: csrfOf(account.text), redirect_uri: 'https://evil.example/cb', type: 'confidential' })).status).toBe(404)
  })
})

describe('the token exchange', () => {
  it('answers a JWT for the API and a refresh token for the same user and scopes; Bearer calls work, the refresh token refreshes, the OAuth 1.0a token keeps working', async () => {
    const t = await issueToken(glass, 'alice', ['read_public', 'write_public'])
    const res = await exchange(glass, t)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read_public write_public', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' })
    const access = res.body.access_token as string
    expect(decodeJwt(access)).toMatchObject({ iss: stack.url, aud: `${stack.url}/api`, sub: 'alice', client_id: glass.clientId, scope: 'read_public write_public' })
    const posted = await bearer(stack.url, 'POST', '/api/statuses/update.json', access, { status: 'Moved to OAuth 2.0' })
    expect(posted.status).toBe(200)
    expect((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', access)).status).toBe(200)

    const refreshed = await post(glass, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token as string })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body.refresh_token).not.toBe(res.body.refresh_token)
    expect(decodeJwt(refreshed.body.access_token as string)).toMatchObject({ sub: 'alice', client_id: glass.clientId, scope: 'read_public write_public' })
    expect((await bearer(stack.url, 'GET', '/api/statuses/friends_timeline.json', refreshed.body.access_token as string)).status).toBe(200)

    expect(await oauth1Call(glass, t, '/api/statuses/friends_timeline.json')).toBe(200)
  })

  it('narrows the scopes when `scope` asks, and refuses wider ones with invalid_scope', async () => {
    const t = await issueToken(glass, 'alice', ['read_public'])
    const narrow = await issueToken(glass, 'alice', ['read_public', 'write_public'])
    const r = await exchange(glass, narrow, { scope: 'read_public' })
    expect(r.status).toBe(200)
    expect(r.body.scope).toBe('read_public')
    expect((await bearer(stack.url, 'POST', '/api/statuses/update.json', r.body.access_token as string, { status: 'no' })).status).toBe(403)
    const wider = await exchange(glass, t, { scope: 'read_public write_public' })
    expect(wider.status).toBe(400)
    expect(wider.body.error).toBe('invalid_scope')
    const outside = await exchange(glass, t, { scope: 'write_private' })
    expect(outside.body.error).toBe('invalid_scope')
  })

  it('a second exchange of the same token revokes the first one\'s grant: its access and refresh tokens are refused', async () => {
    const t = await issueToken(glass, 'alice', ['read_public'])
    const first = await exchange(glass, t)
    expect(first.status).toBe(200)
    expect((await bearer(stack.url, 'GET', '/api/statuses/friends_timeline.json', first.body.access_token as string)).status).toBe(200)
    const second = await exchange(glass, t)
    expect(second.status).toBe(200)
    const refused = await bearer(stack.url, 'GET', '/api/statuses/friends_timeline.json', first.body.access_token as string)
    expect(refused.status).toBe(401)
    expect(refused.challenge).toContain('invalid_token')
    expect((await post(glass, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string })).body.error).toBe('invalid_grant')
    expect((await bearer(stack.url, 'GET', '/api/statuses/friends_timeline.json', second.body.access_token as string)).status).toBe(200)
  })

  it('two exchanges of one token at once leave exactly one grant live', async () => {
    const t = await issueToken(glass, 'alice', ['read_public'])
    const both = await Promise.all([exchange(glass, t), exchange(glass, t)])
    expect(both.map((r) => r.status)).toEqual([200, 200])
    const calls = await Promise.all(both.map((r) => bearer(stack.url, 'GET', '/api/statuses/friends_timeline.json', r.body.access_token as string)))
    expect(calls.map((c) => c.status).sort()).toEqual([200, 401])
  })

  it('lists the grant on the user\'s account page under the application\'s name', async () => {
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const page = await web.get('/account')
    const sites = page.text.slice(page.text.indexOf('Sites you sign in to with kigo'))
    expect(sites.slice(0, sites.indexOf('</table>'))).toMatch(/Looking Glass[\s\S]*See your public entries and stars/)
  })
})

describe('the operator\'s introspection', () => {
  const introspect = (token: unknown) => stack.admin<Record<string, unknown>>('POST', '/admin/oauth2/introspect', { token })

  it('says what the gateway makes of an access token: live with its user, client and scopes; revoked once exchanged again; unknown for anything else', async () => {
    const t = await issueToken(glass, 'alice', ['read_public', 'write_public'])
    const first = await exchange(glass, t)
    const access = first.body.access_token as string
    const live = await introspect(access)
    expect(live.status).toBe(200)
    expect(live.body).toMatchObject({ active: true, token_type: 'access_token', sub: 'alice', client_id: glass.clientId, scope: 'read_public write_public', iss: stack.url, aud: `${stack.url}/api`, deployment: 'domestic' })
    expect((live.body.exp as number) - (live.body.iat as number)).toBe(3600)
    await exchange(glass, t)
    expect((await introspect(access)).body).toEqual({ active: false, reason: 'revoked' })
    // A refresh token, an OAuth 1.0a token, a token with its payload changed: none is an access token of this service.
    const [h, , sig] = access.split('.')
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'bobby' })).toString('base64url')}.${sig}`
    for (const other of [first.body.refresh_token as string, t.token, forged]) expect((await introspect(other)).body).toEqual({ active: false, reason: 'unknown' })
  })

  it('answers nobody but the operator: no admin token, or a wrong one, is 401 and says nothing of the token', async () => {
    for (const authorization of [undefined, 'Bearer not-the-admin-token']) {
      const res = await fetch(`${stack.adminUrl}/admin/oauth2/introspect`, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body: JSON.stringify({ token: 'x' }) })
      expect(res.status).toBe(401)
      expect(await res.text()).not.toContain('active')
    }
  })

  it('refuses a body without one token in it with 400, naming the field', async () => {
    for (const body of [{}, { token: '' }, { token: 7 }, { token: 'x', extra: 1 }]) {
      const answer = await stack.admin<{ error: { code: string; message: string } }>('POST', '/admin/oauth2/introspect', body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.error.code).toBe('invalid_parameter')
    }
  })
})

describe('refusals', () => {
  it('refuses a token of another application with unauthorized_client', async () => {
    const theirs = await issueToken(other, 'alice', ['read_public'])
    // Signed with the token's own secret and either application's consumer secret.
    for (const signer of [glass, other]) {
      const r = await post(glass, signedBody(signer, theirs))
      expect(r.status).toBe(400)
      expect(r.body.error).toBe('unauthorized_client')
    }
  })

  it('refuses a wrong token secret, a wrong consumer secret, an unknown or revoked token with invalid_grant', async () => {
    const t = await issueToken(glass, 'alice', ['read_public'])
    const wrongSecret = await post(glass, signedBody(glass, { token: t.token, secret: 'not-the-secret' }))
    expect(wrongSecret.body.error).toBe('invalid_grant')
    const wrongConsumer = await post(glass, signedBody({ key: glass.key, secret: 'not-the-consumer-secret' }, t))
    expect(wrongConsumer.body.error).toBe('invalid_grant')
    const unknown = await post(glass, signedBody(glass, { token: 'no-such-token', secret: 'x' }))
    expect(unknown.body.error).toBe('invalid_grant')
    const revoked = await issueToken(glass, 'alice', ['read_public'])
    expect((await stack.admin('POST', `/admin/tokens/${revoked.token}/revoke`)).status).toBe(200)
    const r = await exchange(glass, revoked)
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_grant')
  })

  it('refuses a replayed signature (the same nonce) with invalid_grant', async () => {
    const t = await issueToken(glass, 'alice', ['read_public'])
    const body = signedBody(glass, t)
    expect((await post(glass, body)).status).toBe(200)
    const again = await post(glass, body)
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_grant')
    expect(again.body.error_description).toContain('nonce')
  })

  it('refuses a signature that does not cover a changed body parameter', async () => {
    const t = await issueToken(glass, 'alice', ['read_public', 'write_public'])
    const body = { ...signedBody(glass, t, { scope: 'read_public' }), scope: 'read_public write_public' }
    expect((await post(glass, body)).body.error).toBe('invalid_grant')
  })

  it('refuses a public client with unauthorized_client, and a wrong client secret with invalid_client', async () => {
    const t = await issueToken(phone, 'alice', ['read_public'])
    const r = await exchange(phone, t)
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('unauthorized_client')
    const own = await issueToken(glass, 'alice', ['read_public'])
    const bad = await post(glass, signedBody(glass, own), { clientSecret: 'wrong' })
    expect(bad.status).toBe(401)
    expect(bad.body.error).toBe('invalid_client')
  })

  it('refuses missing parameters with invalid_request', async () => {
    const t = await issueToken(glass, 'alice', ['read_public'])
    const { subject_token: _s, ...noSubject } = signedBody(glass, t)
    expect((await post(glass, noSubject)).body.error).toBe('invalid_request')
    const { oauth_signature: _sig, ...unsigned } = signedBody(glass, t)
    expect((await post(glass, unsigned)).body.error).toBe('invalid_request')
    expect((await post(glass, signedBody(glass, t, { subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' }))).body.error).toBe('invalid_request')
  })

  it('audits every exchange, granted or refused, and records each token exchanged', async () => {
    const audit = await stack.admin<{ events: Array<{ action: string; by: string; after: Record<string, unknown> }> }>('GET', '/admin/audit?kind=oidc&limit=1000')
    const exchanges = audit.body.events.filter((e) => e.action === 'oauth2.exchange')
    expect(exchanges.some((e) => e.after.ok === true && e.by === 'user alice' && e.after.consumer_key === glass.key)).toBe(true)
    expect(exchanges.some((e) => e.after.ok === false && e.after.error === 'unauthorized_client')).toBe(true)
    expect(exchanges.some((e) => e.after.ok === false && e.after.error === 'invalid_grant' && e.after.reason === 'nonce_used: oauth_nonce was already used')).toBe(true)
    expect(exchanges.some((e) => e.after.ok === false && e.after.error === 'invalid_scope')).toBe(true)
    // Refused before the exchange itself: a wrong client secret.
    expect(exchanges.some((e) => e.after.ok === false && e.after.error === 'invalid_client' && e.after.client_id === glass.clientId)).toBe(true)
    expect(JSON.stringify(exchanges)).not.toContain(glass.secret)
    // The record the OAuth 1.0a retirement reads: one row per granted exchange, the token's identifier and never a secret.
    const db = await openDb({ dataDir: stack.config.dataDir })
    const rows = await db.query<{ consumer_key: string; token: string; user_id: string; client_id: string }>('SELECT * FROM kigo_gateway.oauth2_exchanges WHERE consumer_key = $1', [glass.key])
    await db.close()
    const granted = exchanges.filter((e) => e.after.ok === true && e.after.consumer_key === glass.key)
    expect(rows.length).toBe(granted.length)
    expect(rows.every((r) => r.user_id === 'alice' && r.client_id === glass.clientId && r.token.length > 0)).toBe(true)
    expect(JSON.stringify(rows)).not.toContain(glass.secret)
  })
})
