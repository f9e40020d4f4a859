// The OpenID Connect provider against a running stack, driven by the independent
// `openid-client` library (docs/oidc.md): discovery, the code flow with PKCE through
// kigo's own login and consent pages, the ID token verified against the JWKS, userinfo's
// claims, and what it refuses (a code used twice, a wrong verifier, a missing
// code_challenge, an unregistered redirect URI, a wrong state), changing nothing.
import { get } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf } from '../provider/helpers.js'
import { browse, discover, oidc, registerClient, startSignIn, type RegisteredClient } from './helpers.js'

let stack: Stack
let alice: { id: string; name: string; password: string }
let site: RegisteredClient
let config: oidc.Configuration
const redirectUri = 'https://site.example/callback'

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${stack.adminUrl}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{')) continue
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(' ').pop())
  }
  return sum
}

async function stateRows(): Promise<number> {
  // Rows the provider holds, through the operator-visible side effects: grants listed on the account page.
  const web = new WebClient(stack.url)
  await web.signIn('/account/login', alice.id, alice.password)
  const page = await web.get('/account')
  return (page.text.match(/name="client_id"/g) ?? []).length
}

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice Liddell')
  site = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: [redirectUri] })
  config = await discover(stack.url, site)
})

afterAll(async () => {
  await stack?.close()
})

describe('discovery and keys', () => {
  it('publishes the issuer, the code flow with S256 only, and the profile claims', async () => {
    const meta = config.serverMetadata()
    expect(meta.issuer).toBe(stack.url)
    expect(meta.response_types_supported).toEqual(['code'])
    expect(meta.code_challenge_methods_supported).toEqual(['S256'])
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'offline_access']))
    expect(meta.claims_supported).toEqual(expect.arrayContaining(['sub', 'preferred_username', 'name', 'picture', 'profile']))
    expect(meta.userinfo_endpoint).toBe(`${stack.url}/oidc/userinfo`)
    expect(meta.end_session_endpoint).toBe(`${stack.url}/oidc/session/end`)
    expect(meta.grant_types_supported).not.toContain('implicit')
    const jwks = (await (await fetch(meta.jwks_uri!)).json()) as { keys: Array<Record<string, unknown>> }
    expect(jwks.keys.length).toBe(1)
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' })
    // Only the public half.
    expect(jwks.keys[0]).not.toHaveProperty('d')
  })

  it('answers each deployment with its own issuer', async () => {
    const global = (await (await fetch(`${stack.globalUrl}/.well-known/openid-configuration`)).json()) as { issuer: string }
    expect(global.issuer).toBe(stack.globalUrl)
  })
})

describe('the code flow with PKCE', () => {
  it('signs Alice in through the login and consent pages; the ID token verifies against the JWKS; userinfo gives the claims', async () => {
    const before = await metric('kigo_auth_requests_total', { method: 'oidc', route: 'oidc_token', outcome: 'ok' })
    const started = await startSignIn(config, redirectUri)
    let signIn = ''
    const { callback, pages } = await browse(started.url, redirectUri, alice, { onPage: (_path, text) => { if (text.includes('action="/account/login"')) signIn = text } })
    // The account area's own login form and a consent page were shown; the form names the site.
    expect(pages.some((p) => p.endsWith('[sign-in form]'))).toBe(true)
    expect(signIn).toContain('Sign in to continue to Tea Party.')
    expect(callback.searchParams.get('state')).toBe(started.state)

    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    const claims = tokens.claims()!
    expect(claims.sub).toBe('alice')
    expect(claims.iss).toBe(stack.url)
    expect(claims.aud).toBe(site.client_id)
    // No refresh token unless offline_access is asked for.
    expect(tokens.refresh_token).toBeUndefined()

    const info = await oidc.fetchUserInfo(config, tokens.access_token, 'alice')
    expect(info).toEqual({
      sub: 'alice',
      preferred_username: 'alice',
      name: 'Alice Liddell',
      picture: `${stack.url}/users/alice/profile.png`,
      profile: `${stack.url}/alice/`,
    })
    // The icon the claim names is served.
    const icon = await fetch(info.picture as string)
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toMatch(/^image\/png/)

    expect(await metric('kigo_auth_requests_total', { method: 'oidc', route: 'oidc_token', outcome: 'ok' })).toBe(before + 1)
  })

  it('refuses a code used twice, and the tokens of the first exchange stop working', async () => {
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    const again = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce }).catch((e: unknown) => e)
    expect(again).toBeInstanceOf(oidc.ResponseBodyError)
    expect((again as oidc.ResponseBodyError).error).toBe('invalid_grant')
    expect((again as oidc.ResponseBodyError).status).toBe(400)
    // RFC 6749 §4.1.2: the tokens issued from a replayed code are revoked.
    const info = await oidc.fetchUserInfo(config, tokens.access_token, 'alice').catch((e: unknown) => e)
    expect(info).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
  })

  it('refuses a wrong verifier, and the code is not spent by it', async () => {
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
    const wrong = await oidc
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: started.state, expectedNonce: started.nonce })
      .catch((e: unknown) => e)
    expect(wrong).toBeInstanceOf(oidc.ResponseBodyError)
    expect((wrong as oidc.ResponseBodyError).error).toBe('invalid_grant')
    expect((wrong as oidc.ResponseBodyError).status).toBe(400)
    // The right verifier still redeems the code: a guess does not burn the user's sign-in.
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    expect(tokens.claims()!.sub).toBe('alice')
  })

  it('refuses a missing code_challenge with an error sent back to the site, and no sign-in happens', async () => {
    const state = oidc.randomState()
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid profile', state })
    const web = new WebClient(stack.url)
    const res = await web.get(url.pathname + url.search)
    expect(res.status).toBe(303)
    const back = new URL(res.headers.get('location')!)
    expect(back.origin + back.pathname).toBe(redirectUri)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/)
    expect(back.searchParams.get('code')).toBeNull()
  })

  it('refuses an unregistered redirect URI on a page, never redirecting to it', async () => {
    const started = await startSignIn(config, 'https://evil.example/callback')
    const web = new WebClient(stack.url)
    const res = await web.get(started.url.pathname + started.url.search)
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(res.text).toMatch(/redirect_uri did not match any of the client(&#39;|')s registered redirect_uris/)
    // A registered URI spelled differently is not the registered URI.
    for (const spelling of ['https://SITE.example/callback', 'https://site.example/callback/', 'https://site.example/callback?x=1', 'https://site.example:443/callback']) {
      const s = await startSignIn(config, spelling)
      const r = await new WebClient(stack.url).get(s.url.pathname + s.url.search)
      expect(r.status, spelling).toBe(400)
      expect(r.headers.get('location'), spelling).toBeNull()
    }
  })

  it('lets the site refuse a callback whose state is not the one it sent (client side), and the code stays unredeemed', async () => {
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
    const refused = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: oidc.randomState() }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(Error)
    expect((refused as oidc.ClientError).code).toBe('OAUTH_INVALID_RESPONSE')
    expect(String(((refused as oidc.ClientError).cause as Error).message)).toMatch(/"state"/)
    // The code was not spent: the right state still redeems it.
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    expect(tokens.claims()!.sub).toBe('alice')
  })

  it('answers Deny with access_denied to the site and grants nothing', async () => {
    const bob = await stack.addUser('bob', 'Bob')
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, bob, { decision: 'deny' })
    expect(callback.searchParams.get('error')).toBe('access_denied')
    expect(callback.searchParams.get('code')).toBeNull()
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', bob.id, bob.password)
    const account = await web.get('/account')
    expect(account.text).toContain('You have not signed in to any site')
  })

  it('issues a refresh token only when offline_access is asked for', async () => {
    const started = await startSignIn(config, redirectUri, { scope: 'openid profile offline_access', prompt: 'consent' })
    const { callback } = await browse(started.url, redirectUri, alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    expect(typeof tokens.refresh_token).toBe('string')
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!)
    expect(typeof refreshed.access_token).toBe('string')
  })
})

describe('requests that are not part of a sign-in', () => {
  it('refuses another Host than the deployments, in JSON, before the library sees it', async () => {
    const port = new URL(stack.url).port
    for (const path of ['/.well-known/openid-configuration', '/oidc/jwks', '/oidc/interaction/abc']) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path, headers: { host: 'evil.example' } }, (res) => {
          let body = ''
          res.on('data', (d: Buffer) => (body += d.toString()))
          res.on('end', () => resolve({ status: res.statusCode!, body }))
        }).on('error', reject)
      })
      expect(answer.status, path).toBe(400)
      expect(answer.body, path).toMatch(/not a deployment of this service/)
    }
  })

  it('counts a refusal at the token endpoint as a credential refused only when it is one (docs/oidc.md#metrics-and-usage)', async () => {
    const count = (outcome: string) => metric('kigo_auth_requests_total', { method: 'oidc', route: 'oidc_token', outcome })
    const before = { bad: await count('bad_credentials'), malformed: await count('malformed') }
    const basic = (secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(site.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`
    const exchange = (secret: string) =>
      fetch(`${stack.url}/oidc/token`, {
        method: 'POST',
        headers: { authorization: basic(secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: redirectUri, code_verifier: 'v'.repeat(43) }),
      })
    expect((await exchange(site.client_secret!)).status).toBe(400)
    expect((await exchange('not-the-secret')).status).toBe(401)
    expect((await fetch(`${stack.url}/oidc/token`)).status).toBe(404)
    expect(await count('bad_credentials')).toBe(before.bad + 2)
    expect(await count('malformed')).toBe(before.malformed + 1)
  })

  it('answers an interaction page without its cookie (another browser, expired) with a 400 page', async () => {
    const res = await new WebClient(stack.url).get('/oidc/interaction/AAAAAAAAAAAAAAAAAAAAA')
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(res.text).toMatch(/expired, or was started in another browser/)
    const bad = await new WebClient(stack.url).post('/oidc/interaction/AAAA/confirm', { csrf_token: 'x', decision: 'allow' })
    expect(bad.status).toBe(403)
  })
})

describe('one login, one session', () => {
  it('a browser already signed in to the account area goes straight to consent; after signing out of kigo it must sign in again', async () => {
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', alice.id, alice.password)
    const first = await browse((await startSignIn(config, redirectUri)).url, redirectUri, alice, { browser: web })
    expect(first.pages.some((p) => p.endsWith('[sign-in form]'))).toBe(false)
    // Sign out of the account area.
    const account = await web.get('/account')
    expect((await web.post('/account/logout', { csrf_token: csrfOf(account.text) })).status).toBe(303)
    const again = await browse((await startSignIn(config, redirectUri)).url, redirectUri, alice, { browser: web })
    expect(again.pages.some((p) => p.endsWith('[sign-in form]'))).toBe(true)
  })

  it('prompt=none without a kigo session answers login_required to the site', async () => {
    const started = await startSignIn(config, redirectUri, { prompt: 'none' })
    const res = await new WebClient(stack.url).get(started.url.pathname + started.url.search)
    expect(res.status).toBe(303)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('login_required')
  })

  it('the consent form refuses a post without the session CSRF token', async () => {
    const web = new WebClient(stack.url)
    await web.signIn('/account/login', alice.id, alice.password)
    const started = await startSignIn(config, redirectUri, { prompt: 'consent' })
    let consentPath = ''
    await browse(started.url, redirectUri, alice, {
      browser: web,
      onPage: (path, text) => {
        const m = /action="(\/oidc\/interaction\/[^"]+\/confirm)"/.exec(text)
        if (m && consentPath === '') {
          consentPath = m[1]!
          throw new Error('stop')
        }
        void path
      },
    }).catch(() => undefined)
    expect(consentPath).not.toBe('')
    const forged = await web.post(consentPath, { csrf_token: 'forged', decision: 'allow' })
    expect(forged.status).toBe(403)
    expect(forged.headers.get('location')).toBeNull()
  })
})

describe('RP-initiated logout', () => {
  it('asks the user, then ends the kigo session too and returns to the registered post-logout URI', async () => {
    const after = 'https://site.example/signed-out'
    const logoutSite = await registerClient(stack, { name: 'Logout site', owner: 'alice', redirect_uris: [redirectUri], post_logout_redirect_uris: [after] })
    const lconfig = await discover(stack.url, logoutSite)
    const started = await startSignIn(lconfig, redirectUri)
    const { callback, browser } = await browse(started.url, redirectUri, alice)
    const tokens = await oidc.authorizationCodeGrant(lconfig, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    expect((await browser.get('/account')).status).toBe(200)

    const end = oidc.buildEndSessionUrl(lconfig, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: after, state: 'bye' })
    const ask = await browser.get(end.pathname + end.search)
    expect(ask.status).toBe(200)
    expect(ask.text).toContain('Sign out of kigo?')
    const form = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(ask.text) ?? /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"[^>]*>([\s\S]*?)<\/form>/.exec(ask.text)
    expect(form).not.toBeNull()
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form![2]!)![1]!
    const done = await browser.post(new URL(form![1]!, stack.url).pathname, { xsrf, logout: 'yes' })
    expect(done.status).toBe(303)
    const back = new URL(done.headers.get('location')!)
    expect(back.origin + back.pathname).toBe(after)
    expect(back.searchParams.get('state')).toBe('bye')
    // One session: the account area is signed out too.
    const account = await browser.get('/account')
    expect(account.status).toBe(303)
    expect(account.headers.get('location')).toMatch(/^\/account\/login/)
  })
})

describe('the account page', () => {
  it('lists the sites Alice signed in to and revokes one: its tokens stop working, and the audit trail names her', async () => {
    const started = await startSignIn(config, redirectUri)
    const { callback, browser } = await browse(started.url, redirectUri, alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    const page = await browser.get('/account')
    expect(page.text).toContain('Sites you sign in to with kigo')
    expect(page.text).toContain('Tea Party')
    expect(await stateRows()).toBe(1)
    // Unconfirmed, the revoke asks first and changes nothing.
    const ask = await browser.post('/account/oidc-sites/revoke', { csrf_token: csrfOf(page.text), client_id: site.client_id })
    expect(ask.status).toBe(200)
    expect(ask.text).toContain("Revoke Tea Party&#39;s access?")
    expect(await stateRows()).toBe(1)
    const revoked = await browser.post('/account/oidc-sites/revoke', { csrf_token: csrfOf(page.text), client_id: site.client_id, confirm: 'yes' })
    expect(revoked.status).toBe(303)
    const after = await browser.get('/account')
    expect(after.text).not.toContain('Tea Party')
    const info = await oidc.fetchUserInfo(config, tokens.access_token, 'alice').catch((e: unknown) => e)
    expect(info).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)
    const audit = await stack.admin<{ events: Array<{ action: string; by: string; before: unknown }> }>('GET', `/admin/audit?kind=oidc&target=${site.client_id}`)
    expect(audit.body.events[0]).toMatchObject({ action: 'account.oidc_revoke', by: 'user alice', before: { user: 'alice', grants: expect.any(Number) } })
  })
})

describe('key rotation', () => {
  it('keeps ID tokens signed by the old key verifiable while new ones use the new key', async () => {
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
    const oldTokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    const oldKid = JSON.parse(Buffer.from(oldTokens.id_token!.split('.')[0]!, 'base64url').toString()).kid as string

    const rotated = await stack.admin<{ kid: string; retired: string[] }>('POST', '/admin/oidc/rotate-key')
    expect(rotated.status).toBe(200)
    expect(rotated.body.retired).toEqual([oldKid])

    const jwks = (await (await fetch(`${stack.url}/oidc/jwks`)).json()) as { keys: Array<{ kid: string }> }
    expect(jwks.keys.map((k) => k.kid)).toEqual([rotated.body.kid, oldKid])

    // A relying party that fetches the JWKS afresh verifies the old token and a new one.
    const fresh = await discover(stack.url, site)
    const s2 = await startSignIn(fresh, redirectUri)
    const { callback: cb2 } = await browse(s2.url, redirectUri, alice)
    const newTokens = await oidc.authorizationCodeGrant(fresh, cb2, { pkceCodeVerifier: s2.verifier, expectedState: s2.state, expectedNonce: s2.nonce })
    expect(JSON.parse(Buffer.from(newTokens.id_token!.split('.')[0]!, 'base64url').toString()).kid).toBe(rotated.body.kid)
    const { jwtVerify, createRemoteJWKSet } = await import('jose')
    const set = createRemoteJWKSet(new URL(`${stack.url}/oidc/jwks`))
    await expect(jwtVerify(oldTokens.id_token!, set, { issuer: stack.url, audience: site.client_id })).resolves.toBeTruthy()
    await expect(jwtVerify(newTokens.id_token!, set, { issuer: stack.url, audience: site.client_id })).resolves.toBeTruthy()
  })
})
