// The OpenID Connect provider from an attacker's side, over HTTP to the gateway's public
// app (docs/security.md#openid-connect): what a code, a token, a cookie or a client
// credential of one place is worth in another.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { WebClient, csrfOf } from '../provider/helpers.js'
import { browse, discover, oidc, registerClient, startSignIn, type RegisteredClient } from './helpers.js'

let stack: GatewayApp
let alice: { id: string; name: string; password: string }
let site: RegisteredClient
const redirectUri = 'https://site.example/callback'

beforeAll(async () => {
  stack = await gatewayApp()
  alice = await stack.addUser('alice', 'Alice Liddell')
  site = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: [redirectUri] })
})

afterAll(async () => {
  await stack?.close()
})

const basic = (c: RegisteredClient) => `Basic ${Buffer.from(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret!)}`).toString('base64')}`

/** A code exchange by hand at `base`'s token endpoint. */
async function redeem(base: string, code: string, verifier: string, client = site) {
  const res = await stack.fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }).toString(),
  })
  return { status: res.status, body: (await res.json()) as Record<string, string> }
}

describe('codes and tokens are bound to the deployment that issued them', () => {
  it('a code issued at one deployment is refused at the other deployment’s token endpoint, and stays redeemable where it was issued', async () => {
    // stack.url is http://localhost:PORT, stack.globalUrl http://127.0.0.1:PORT: two issuers, one table.
    const config = await discover(stack.url, site, stack.fetch)
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice, { fetchVia: stack.fetch })
    expect(callback.searchParams.get('iss')).toBe(stack.url)
    const code = callback.searchParams.get('code')!

    const elsewhere = await redeem(stack.globalUrl, code, started.verifier)
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error).toBe('invalid_grant')
    expect(elsewhere.body.id_token).toBeUndefined()

    // The attempt did not spend it: its own deployment still redeems it.
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    expect(tokens.claims()!.iss).toBe(stack.url)
  })

  it('an access token issued at one deployment is refused at the other deployment’s userinfo', async () => {
    const config = await discover(stack.url, site, stack.fetch)
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice, { fetchVia: stack.fetch })
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })

    const elsewhere = await stack.fetch(`${stack.globalUrl}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(elsewhere.status).toBe(401)
    expect(elsewhere.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    expect(await elsewhere.text()).not.toContain('Alice Liddell')

    const home = await stack.fetch(`${stack.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(home.status).toBe(200)
    expect(((await home.json()) as { sub: string }).sub).toBe('alice')
  })
})

describe('signing out through a site signs out only the user it was for', () => {
  /** The logout confirmation's form (action and xsrf), as the library renders it in kigo's page. */
  const logoutForm = (text: string) => {
    const form = /<form[^>]*id="op.logoutForm"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(text) ?? /<form[^>]*action="([^"]+)"[^>]*id="op.logoutForm"[^>]*>([\s\S]*?)<\/form>/.exec(text)
    expect(form, text.slice(0, 400)).not.toBeNull()
    return { action: new URL(form![1]!, stack.url).pathname, xsrf: /name="xsrf" value="([^"]+)"/.exec(form![2]!)![1]! }
  }

  it('alice signs in to a site, signs out of kigo, bob signs in in the same browser: the site’s logout does not sign bob out', async () => {
    const bob = await stack.addUser('bob', 'Bob')
    const config = await discover(stack.url, site, stack.fetch)
    const started = await startSignIn(config, redirectUri)
    const { browser } = await browse(started.url, redirectUri, alice, { fetchVia: stack.fetch })
    const account = await browser.get('/account')
    expect((await browser.post('/account/logout', { csrf_token: csrfOf(account.text) })).status).toBe(303)
    expect((await browser.signIn('/account/login', bob.id, bob.password)).status).toBe(303)
    expect((await browser.get('/account')).text).toContain('Bob')

    // The site sends the browser to sign out; the provider session there is still alice's.
    const ask = await browser.get(`/oidc/session/end?client_id=${site.client_id}`)
    expect(ask.status).toBe(200)
    const form = logoutForm(ask.text)
    const done = await browser.post(form.action, { xsrf: form.xsrf, logout: 'yes' })
    expect(done.status).toBe(303)
    const after = await browser.get('/account')
    expect(after.status).toBe(200)
    expect(after.text).toContain('Bob')
  })

  it('Stay signed in keeps the kigo session', async () => {
    const config = await discover(stack.url, site, stack.fetch)
    const started = await startSignIn(config, redirectUri)
    const { browser } = await browse(started.url, redirectUri, alice, { fetchVia: stack.fetch })
    const ask = await browser.get(`/oidc/session/end?client_id=${site.client_id}`)
    const form = logoutForm(ask.text)
    expect((await browser.post(form.action, { xsrf: form.xsrf })).status).toBe(303)
    expect((await browser.get('/account')).status).toBe(200)
  })

  it('a browser signed in to kigo but never through a site is not signed out by the auto-submitting logout page, which cannot be framed', async () => {
    const browser = new WebClient(stack.url, stack.fetch)
    expect((await browser.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const page = await browser.get(`/oidc/session/end?client_id=${site.client_id}`)
    expect(page.status).toBe(200)
    expect(page.text).toContain('document.forms[0].submit()')
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("form-action 'self'")
    // The one inline script runs by its hash; nothing else may.
    const script = /<script>([\s\S]*?)<\/script>/.exec(page.text)![1]!
    expect(csp).toContain(`script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`)
    expect(csp).not.toMatch(/script-src[^;]*unsafe/)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    // The form it submits.
    const action = /<form method="post" action="([^"]+)"/.exec(page.text)![1]!
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.text)![1]!
    expect((await browser.post(new URL(action, stack.url).pathname, { xsrf, logout: 'yes' })).status).toBe(303)
    expect((await browser.get('/account')).status).toBe(200)
  })
})

describe('only what docs/oidc.md offers', () => {
  it('refuses the client secret in the body (client_secret_post) from a client registered for Basic; Basic still redeems the code', async () => {
    const config = await discover(stack.url, site, stack.fetch)
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice, { fetchVia: stack.fetch })
    const code = callback.searchParams.get('code')!
    const res = await stack.fetch(`${stack.url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: started.verifier, redirect_uri: redirectUri, client_id: site.client_id, client_secret: site.client_secret! }).toString(),
    })
    expect(res.status).toBe(401)
    const body = (await res.json()) as Record<string, string>
    expect(body.error).toBe('invalid_client')
    expect(body.access_token).toBeUndefined()
    const basicAnswer = await redeem(stack.url, code, started.verifier)
    expect(basicAnswer.status).toBe(200)
    expect(typeof basicAnswer.body.access_token).toBe('string')
  })

  it('discovery advertises Basic and none only, no pushed requests and no DPoP, and /oidc/request does not take one', async () => {
    for (const base of [stack.url, stack.globalUrl]) {
      const meta = (await (await stack.fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
      expect(meta.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'none'])
      expect(meta).not.toHaveProperty('token_endpoint_auth_signing_alg_values_supported')
      expect(meta).not.toHaveProperty('pushed_authorization_request_endpoint')
      expect(meta).not.toHaveProperty('require_pushed_authorization_requests')
      expect(meta).not.toHaveProperty('dpop_signing_alg_values_supported')
    }
    const par = await stack.fetch(`${stack.url}/oidc/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(site) },
      body: new URLSearchParams({ response_type: 'code', client_id: site.client_id, redirect_uri: redirectUri, scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }).toString(),
    })
    expect(par.status).not.toBe(201)
    expect(par.status).toBeGreaterThanOrEqual(400)
    expect(par.status).toBeLessThan(500)
    expect(await par.text()).not.toContain('request_uri')
  })

  it('bob holding alice’s interaction cookie is not shown her consent page', async () => {
    const bob = { id: 'bob2', password: (await stack.addUser('bob2', 'Bob Two')).password }
    const config = await discover(stack.url, site, stack.fetch)
    // A consent is asked for even after an earlier grant.
    const started = await startSignIn(config, redirectUri, { prompt: 'consent' })
    let consentPath = ''
    const aliceBrowser = new WebClient(stack.url, stack.fetch)
    await browse(started.url, redirectUri, alice, {
      browser: aliceBrowser,
      onPage: (path, text) => {
        if (consentPath === '' && /action="\/oidc\/interaction\/[^"]+\/confirm"/.test(text)) {
          consentPath = path.split('?')[0]!
          throw new Error('stop at the consent page')
        }
      },
    }).catch(() => undefined)
    expect(consentPath).toMatch(/^\/oidc\/interaction\//)
    // Alice's own browser is shown it.
    expect((await aliceBrowser.get(consentPath)).status).toBe(200)

    const bobBrowser = new WebClient(stack.url, stack.fetch)
    expect((await bobBrowser.signIn('/account/login', bob.id, bob.password)).status).toBe(303)
    for (const [name, value] of aliceBrowser.cookies) if (name.startsWith('_interaction')) bobBrowser.cookies.set(name, value)
    const stolen = await bobBrowser.get(consentPath)
    expect(stolen.status).toBe(400)
    expect(stolen.text).toContain('does not match your session')
    expect(stolen.text).not.toMatch(/action="\/oidc\/interaction\/[^"]+\/confirm"/)
  })
})

describe('the account page', () => {
  it('revoking a site is audited with the user and the address; a revoke that finds no grant records nothing', async () => {
    const config = await discover(stack.url, site, stack.fetch)
    const started = await startSignIn(config, redirectUri)
    const { browser } = await browse(started.url, redirectUri, alice, { fetchVia: stack.fetch })
    const page = await browser.get('/account')
    expect((await browser.post('/account/oidc-sites/revoke', { csrf_token: csrfOf(page.text), client_id: site.client_id, confirm: 'yes' })).status).toBe(303)
    const audit = await stack.admin<{ events: Array<{ action: string; kind: string; target: string; by: string; address: string; before: unknown; after: unknown }> }>('GET', `/admin/audit?kind=oidc&target=${site.client_id}`)
    expect(audit.status).toBe(200)
    const revokes = audit.body.events.filter((e) => e.action === 'account.oidc_revoke')
    expect(revokes).toHaveLength(1)
    expect(revokes[0]).toMatchObject({ kind: 'oidc', target: site.client_id, by: 'user alice', after: null, before: { user: 'alice' } })
    expect(revokes[0]!.address).toMatch(/127\.0\.0\.1/)
    // Nothing left to revoke: nothing recorded.
    const again = await browser.get('/account')
    expect((await browser.post('/account/oidc-sites/revoke', { csrf_token: csrfOf(again.text), client_id: site.client_id, confirm: 'yes' })).status).toBe(303)
    const after = await stack.admin<{ events: Array<{ action: string }> }>('GET', `/admin/audit?kind=oidc&target=${site.client_id}`)
    expect(after.body.events.filter((e) => e.action === 'account.oidc_revoke')).toHaveLength(1)
  })
})
