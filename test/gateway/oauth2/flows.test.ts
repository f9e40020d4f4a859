// OAuth 2.0 for the API against a running stack (docs/oauth2.md), driven by the independent
// `openid-client` library: the RFC 8414 metadata, the authorization code flow with PKCE
// through kigo's own consent page, refresh tokens rotated with reuse revoking the grant,
// the device flow on the /device page, revocation and introspection; then Bearer calls to
// the API with each scope, as the user, counted as method oauth2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, codeOf, csrfOf } from '../provider/helpers.js'
import { approveOnPhone, bearer, codeFlow, discoverOAuth, oidc, registerApiClient, type RegisteredClient } from './helpers.js'

let stack: Stack
let alice: { id: string; name: string; password: string }
let bob: { id: string; name: string; password: string }
let writer: RegisteredClient
let reader: RegisteredClient
let writerConfig: oidc.Configuration
let readerConfig: oidc.Configuration

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${stack.adminUrl}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{')) continue
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(' ').pop())
  }
  return sum
}

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice Liddell')
  bob = await stack.addUser('bobby', 'Bob')
  // A confidential web client that may read and write; a public (PKCE-only) one that may read.
  writer = await registerApiClient(stack, { name: 'Looking Glass', owner: 'alice', scopes: ['read_public', 'write_public'] })
  reader = await registerApiClient(stack, { name: 'Reader', owner: 'bobby', scopes: ['read_public'], public: true })
  writerConfig = await discoverOAuth(stack.url, writer)
  readerConfig = await discoverOAuth(stack.url, reader)
})

afterAll(async () => {
  await stack?.close()
})

describe('metadata', () => {
  it('publishes RFC 8414 metadata with the API scopes, PKCE S256, the device flow and no implicit or password grant', async () => {
    const res = await fetch(`${stack.url}/.well-known/oauth-authorization-server`)
    expect(res.status).toBe(200)
    const meta = (await res.json()) as Record<string, unknown>
    expect(meta.issuer).toBe(stack.url)
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'offline_access', 'read_public', 'write_public', 'read_private', 'write_private']))
    expect(meta.code_challenge_methods_supported).toEqual(['S256'])
    expect(meta.response_types_supported).toEqual(['code'])
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']))
    expect(meta.grant_types_supported).not.toContain('implicit')
    expect(meta.grant_types_supported).not.toContain('password')
    expect(meta.device_authorization_endpoint).toBe(`${stack.url}/oidc/device/auth`)
    expect(meta.revocation_endpoint).toBe(`${stack.url}/oidc/token/revocation`)
    expect(meta.introspection_endpoint).toBe(`${stack.url}/oidc/token/introspection`)
    const openid = (await (await fetch(`${stack.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    expect(openid.scopes_supported).toEqual(meta.scopes_supported)
  })
})

describe('authorization code with PKCE', () => {
  it('asks the user in the words of OAuth 1.0a, and issues a one-hour JWT for this deployment\'s API with the scopes granted', async () => {
    const pages: string[] = []
    const tokens = await codeFlow(writerConfig, alice, 'read_public write_public', { onPage: (_p, text) => pages.push(text) })
    const consent = pages.find((p) => p.includes('/confirm"'))!
    expect(consent).toContain('See your public entries and stars')
    expect(consent).toContain('Post and delete entries and add or remove stars for you')
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'RS256' })
    const claims = decodeJwt(tokens.access_token)
    expect(claims).toMatchObject({ iss: stack.url, aud: `${stack.url}/api`, sub: 'alice', client_id: writer.client_id, scope: 'read_public write_public' })
    expect(claims.exp! - claims.iat!).toBe(3600)
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(tokens.refresh_token).toBeTruthy()
  })

  it('refuses an authorization request without PKCE from a public client', async () => {
    const url = oidc.buildAuthorizationUrl(readerConfig, { redirect_uri: 'https://app.example/callback', scope: 'read_public', state: 'x' })
    const res = await fetch(url, { redirect: 'manual' })
    const location = res.headers.get('location') ?? ''
    expect(location.startsWith('https://app.example/callback')).toBe(true)
    expect(new URL(location).searchParams.get('error')).toBe('invalid_request')
  })

  it('refuses a scope the client is not registered for, and any resource but the API', async () => {
    const other = oidc.buildAuthorizationUrl(readerConfig, { redirect_uri: 'https://app.example/callback', scope: 'read_public', resource: 'https://elsewhere.example/api', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', state: 'x' })
    const res = await fetch(other, { redirect: 'manual' })
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target')
  })
})

describe('Bearer calls with each scope', () => {
  it('a write_public token posts as the user, reads, and is refused photos/create with insufficient_scope', async () => {
    const before = await metric('kigo_auth_requests_total', { method: 'oauth2', outcome: 'ok' })
    const { access_token: token } = await codeFlow(writerConfig, alice, 'read_public write_public')
    const posted = await bearer(stack.url, 'POST', '/api/statuses/update.json', token, { status: 'Posted with OAuth 2.0' })
    expect(posted.status).toBe(200)
    expect(posted.body).toMatchObject({ text: 'Posted with OAuth 2.0', user: { id: 'alice' } })
    const timeline = await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', token)
    expect(timeline.status).toBe(200)
    expect(JSON.stringify(timeline.body)).toContain('Posted with OAuth 2.0')
    const me = await bearer(stack.url, 'GET', '/applications/my.json', token)
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ url_name: 'alice', display_name: 'Alice Liddell' })
    const photo = await bearer(stack.url, 'POST', '/api/photos/create.json', token, { title: 'x' })
    expect(photo.status).toBe(403)
    expect(photo.body).toMatchObject({ error: { code: 'insufficient_scope' } })
    expect(photo.challenge).toMatch(/^Bearer realm="[^"]+", error="insufficient_scope", error_description="[^"]+", scope="write_private"$/)
    expect(await metric('kigo_auth_requests_total', { method: 'oauth2', outcome: 'ok' })).toBeGreaterThanOrEqual(before + 3)
    expect(await metric('kigo_auth_requests_total', { method: 'oauth2', outcome: 'scope_denied' })).toBeGreaterThanOrEqual(1)
    // The usage report counts them as oauth2, never as a legacy method.
    const usage = await stack.admin<{ records: Array<{ method: string; user: string; accepted: number }> }>('GET', '/admin/usage?method=oauth2')
    expect(usage.body.records.find((r) => r.user === 'alice')).toMatchObject({ method: 'oauth2' })
    expect(usage.body.records.find((r) => r.user === 'alice')!.accepted).toBeGreaterThanOrEqual(3)
    const legacy = await stack.admin<{ records: Array<{ method: string }> }>('GET', '/admin/usage?method=legacy')
    expect(legacy.body.records.filter((r) => r.method === 'oauth2')).toEqual([])
  })

  it('a read_public token reads and is refused a write with insufficient_scope, nothing posted', async () => {
    const { access_token: token } = await codeFlow(readerConfig, bob, 'read_public')
    expect(decodeJwt(token).scope).toBe('read_public')
    const read = await bearer(stack.url, 'GET', '/api/statuses/friends_timeline.json', token)
    expect(read.status).toBe(200)
    const write = await bearer(stack.url, 'POST', '/api/statuses/update.json', token, { status: 'must not appear' })
    expect(write.status).toBe(403)
    expect(write.challenge).toContain('error="insufficient_scope"')
    expect(write.challenge).toContain('scope="write_public"')
    const mine = await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', token)
    expect(JSON.stringify(mine.body)).not.toContain('must not appear')
  })
})

describe('registration on the account pages', () => {
  it('a user registers a public client with API scopes and it gets tokens for them', async () => {
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', bob.id, bob.password)
    const form = await web.get('/account/oidc-clients')
    expect(form.text).toContain('name="api_scope" value="write_private"')
    const created = await web.postAndFollow('/account/oidc-clients', {
      csrf_token: csrfOf(form.text),
      name: 'Pocket Reader',
      redirect_uris: 'https://app.example/callback',
      type: 'public',
      api_scope: ['read_public', 'write_public'],
    })
    expect(created.posted).toBe(303)
    expect(created.text).toContain('<code>read_public</code> <code>write_public</code>')
    const clientId = codeOf(created.text, 'client_id')!
    const config = await discoverOAuth(stack.url, { client_id: clientId, redirect_uris: ['https://app.example/callback'] })
    const tokens = await codeFlow(config, bob, 'write_public')
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: clientId, scope: 'write_public' })
    expect((await bearer(stack.url, 'POST', '/api/statuses/update.json', tokens.access_token, { status: 'from my pocket' })).status).toBe(200)
  })
})

describe('refresh tokens', () => {
  it('rotate at each use; a spent one used again revokes the whole grant, its access tokens included', async () => {
    const first = await codeFlow(writerConfig, alice, 'read_public write_public')
    const second = await oidc.refreshTokenGrant(writerConfig, first.refresh_token!)
    expect(second.refresh_token).toBeTruthy()
    expect(second.refresh_token).not.toBe(first.refresh_token)
    expect((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', second.access_token)).status).toBe(200)
    // The spent refresh token again: refused, and the grant is gone.
    await expect(oidc.refreshTokenGrant(writerConfig, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    await expect(oidc.refreshTokenGrant(writerConfig, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    for (const token of [first.access_token, second.access_token]) {
      const refused = await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', token)
      expect(refused.status).toBe(401)
      expect(refused.body).toMatchObject({ error: { code: 'invalid_token' } })
      expect(refused.challenge).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/)
    }
  })
})

describe('the device flow', () => {
  it('a command-line tool gets tokens once the user types its code at /device on a phone', async () => {
    const started = await oidc.initiateDeviceAuthorization(readerConfig, { scope: 'read_public' })
    expect(started.verification_uri).toBe(`${stack.url}/device`)
    expect(started.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/)
    const polling = oidc.pollDeviceAuthorizationGrant(readerConfig, started)
    const pages = await approveOnPhone(stack.url, started.verification_uri, started.user_code, bob)
    expect(pages[0]).toContain('name="viewport"')
    expect(pages[0]).toContain('Type the code your device or program shows.')
    expect(pages[1]).toContain(started.user_code)
    expect(pages.some((p) => p.includes('See your public entries and stars'))).toBe(true)
    expect(pages.at(-1)).toContain('is connected to your kigo account')
    const tokens = await polling
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'bobby', aud: `${stack.url}/api`, scope: 'read_public' })
    expect((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status).toBe(200)
  }, 30_000)

  it('a mistyped code is told so on the page, and nothing is granted', async () => {
    const started = await oidc.initiateDeviceAuthorization(readerConfig, { scope: 'read_public' })
    const pages = await approveOnPhone(stack.url, started.verification_uri, 'BCDF-GHJK', bob).catch((err: Error) => [err.message])
    expect(pages.join('\n')).toContain('That code is not right')
  })
})

describe('revocation and introspection', () => {
  it('the holding client introspects its token; another client learns nothing; a revoked access token stops working at once', async () => {
    const tokens = await codeFlow(writerConfig, alice, 'read_public write_public')
    const seen = await oidc.tokenIntrospection(writerConfig, tokens.access_token)
    expect(seen).toMatchObject({ active: true, sub: 'alice', client_id: writer.client_id, scope: 'read_public write_public', aud: `${stack.url}/api` })
    expect(await oidc.tokenIntrospection(readerConfig, tokens.access_token)).toMatchObject({ active: false })
    expect(Object.keys(await oidc.tokenIntrospection(readerConfig, tokens.access_token))).toEqual(['active'])
    // Another client cannot revoke it.
    await oidc.tokenRevocation(readerConfig, tokens.access_token)
    expect((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status).toBe(200)
    await oidc.tokenRevocation(writerConfig, tokens.access_token)
    const refused = await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)
    expect(refused.status).toBe(401)
    expect(refused.challenge).toContain('error="invalid_token"')
    expect(await oidc.tokenIntrospection(writerConfig, tokens.access_token)).toMatchObject({ active: false })
    // Its grant went with it: the refresh token too.
    await expect(oidc.refreshTokenGrant(writerConfig, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  it('revoking the refresh token revokes its access tokens', async () => {
    const tokens = await codeFlow(readerConfig, bob, 'read_public')
    expect((await oidc.tokenIntrospection(readerConfig, tokens.refresh_token!)).active).toBe(true)
    await oidc.tokenRevocation(readerConfig, tokens.refresh_token!)
    expect((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status).toBe(401)
  })

  it("revoking the site on the account page revokes its tokens", async () => {
    const tokens = await codeFlow(writerConfig, alice, 'read_public write_public')
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', alice.id, alice.password)
    const page = await web.get('/account')
    const revoked = await web.post('/account/oidc-sites/revoke', { csrf_token: csrfOf(page.text), client_id: writer.client_id, confirm: 'yes' })
    expect(revoked.status).toBe(303)
    expect((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status).toBe(401)
  })
})
