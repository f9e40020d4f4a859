// The OpenID Connect provider from an attacker's side, over HTTP against a running gateway
// and core (docs/security.md#openid-connect): what a code, a token, a cookie or a client
// credential of one place is worth in another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { browse, discover, oidc, registerClient, startSignIn, type RegisteredClient } from './helpers.js'

let stack: Stack
let alice: { id: string; name: string; password: string }
let site: RegisteredClient
const redirectUri = 'https://site.example/callback'

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice Liddell')
  site = await registerClient(stack, { name: 'Tea Party', owner: 'alice', redirect_uris: [redirectUri] })
})

afterAll(async () => {
  await stack?.close()
})

const basic = (c: RegisteredClient) => `Basic ${Buffer.from(`${encodeURIComponent(c.client_id)}:${encodeURIComponent(c.client_secret!)}`).toString('base64')}`

/** A code exchange by hand at `base`'s token endpoint. */
async function redeem(base: string, code: string, verifier: string, client = site) {
  const res = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }).toString(),
  })
  return { status: res.status, body: (await res.json()) as Record<string, string> }
}

describe('codes and tokens are bound to the deployment that issued them', () => {
  it('a code issued at one deployment is refused at the other deployment’s token endpoint, and stays redeemable where it was issued', async () => {
    // stack.url is http://localhost:PORT, stack.globalUrl http://127.0.0.1:PORT: two issuers, one table.
    const config = await discover(stack.url, site)
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
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
    const config = await discover(stack.url, site)
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })

    const elsewhere = await fetch(`${stack.globalUrl}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(elsewhere.status).toBe(401)
    expect(elsewhere.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    expect(await elsewhere.text()).not.toContain('Alice Liddell')

    const home = await fetch(`${stack.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(home.status).toBe(200)
    expect(((await home.json()) as { sub: string }).sub).toBe('alice')
  })
})
