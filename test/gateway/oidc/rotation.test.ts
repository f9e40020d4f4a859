// An OpenID Connect client secret rotated with an overlap, over HTTP
// (docs/oidc.md#rotating-the-client-secret): the old secret still authenticates the client
// at the token endpoint (client_secret_basic, through the independent openid-client for a
// whole sign-in) until the overlap ends on the gateway's clock, then only the new one
// does; with none it stops at once. On the account pages the confirmation asks for the
// overlap and the answer shows the new secret once with a copy button; the operator API
// takes overlap_seconds. A bad overlap is refused and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { codeOf, csrfOf, WebClient } from '../provider/helpers.js'
import { browse, discover, oidc, registerClient, startSignIn, type RegisteredClient } from './helpers.js'

let stack: GatewayApp
let clock = Date.now()
let alice: { id: string; password: string }
const redirectUri = 'https://rotating.example/callback'

beforeAll(async () => {
  stack = await gatewayApp({ now: () => clock })
  alice = await stack.addUser('alice', 'Alice')
})

afterAll(async () => {
  await stack?.close()
})


/**
 * A token request authenticated with `secret` (client_secret_basic) for a code that does
 * not exist: 401 invalid_client when the secret is refused, 400 once it is accepted.
 */
async function tokenRequest(clientId: string, secret: string): Promise<{ status: number; error: string }> {
  const res = await stack.fetch(`${stack.url}/oidc/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: redirectUri, code_verifier: 'v'.repeat(43) }),
  })
  return { status: res.status, error: ((await res.json()) as { error: string }).error }
}

/** A whole sign-in whose code is exchanged with `client`'s secret (openid-client): the ID token's subject. */
async function signInWith(client: RegisteredClient): Promise<string> {
  const config = await discover(stack.url, client, stack.fetch)
  const started = await startSignIn(config, redirectUri)
  const { callback } = await browse(started.url, redirectUri, alice, { browser: new WebClient(stack.url, stack.fetch) })
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
  return tokens.claims()!.sub
}

describe('through the operator API', () => {
  it('with 1 hour, the old secret signs a whole sign-in in until the hour is over; then only the new one authenticates', async () => {
    const client = await registerClient(stack, { name: 'Rotating site', owner: 'alice', redirect_uris: [redirectUri] })
    const rotated = await stack.admin<{ client_id: string; client_secret: string; overlap_seconds: number; previous_secret_until: string }>('POST', `/admin/oidc-clients/${client.client_id}/rotate-secret`, { overlap_seconds: 3600 })
    expect(rotated.status).toBe(200)
    expect(rotated.body.overlap_seconds).toBe(3600)
    expect(Date.parse(rotated.body.previous_secret_until)).toBe(Math.floor(clock / 1000) * 1000 + 3_600_000)
    const fresh = { ...client, client_secret: rotated.body.client_secret }

    expect(await signInWith(client)).toBe('alice')
    expect(await signInWith(fresh)).toBe('alice')
    clock += 3599_000
    expect(await tokenRequest(client.client_id, client.client_secret!)).toMatchObject({ status: 400 })
    clock += 1000
    expect(await tokenRequest(client.client_id, client.client_secret!)).toEqual({ status: 401, error: 'invalid_client' })
    expect(await tokenRequest(client.client_id, fresh.client_secret)).toMatchObject({ status: 400 })
    expect(await tokenRequest(client.client_id, 'not-the-secret')).toEqual({ status: 401, error: 'invalid_client' })

    const audit = await stack.admin<{ events: Array<{ action: string; after: unknown }> }>('GET', `/admin/audit?kind=oidc&target=${client.client_id}`)
    expect(audit.body.events[0]).toMatchObject({ action: 'oidc_client.rotate_secret', after: { overlap_seconds: 3600 } })
    expect(JSON.stringify(audit.body)).not.toContain(fresh.client_secret)
  })

  it('with none the old secret stops at once; a bad overlap is a 400 that changes nothing', async () => {
    const client = await registerClient(stack, { name: 'Strict site', owner: 'alice', redirect_uris: [redirectUri] })
    for (const body of [{ overlap_seconds: 1 }, { overlap_seconds: '0' }, { overlap_seconds: 3600, extra: true }]) {
      const res = await stack.admin<{ error: { code: string } }>('POST', `/admin/oidc-clients/${client.client_id}/rotate-secret`, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('invalid_parameter')
    }
    expect(await tokenRequest(client.client_id, client.client_secret!)).toMatchObject({ status: 400 })
    const rotated = await stack.admin<{ client_secret: string; previous_secret_until: string | null }>('POST', `/admin/oidc-clients/${client.client_id}/rotate-secret`, { overlap_seconds: 0 })
    expect(rotated.body.previous_secret_until).toBeNull()
    expect(await tokenRequest(client.client_id, client.client_secret!)).toEqual({ status: 401, error: 'invalid_client' })
    expect(await tokenRequest(client.client_id, rotated.body.client_secret)).toMatchObject({ status: 400 })
  })
})

describe('on the account pages', () => {
  it('asks for the overlap (a day unless changed), shows the new secret once with a copy button on the page the post redirects to, and says until when the old one works; a reload shows none and makes none', async () => {
    const client = await registerClient(stack, { name: 'Alice’s site', owner: 'alice', redirect_uris: [redirectUri] })
    const web = new WebClient(stack.url, stack.fetch)
    expect((await web.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const ask = await web.get(`/account/oidc-clients/${client.client_id}/rotate-secret`)
    expect(ask.status).toBe(200)
    expect(ask.text).toContain('<select id="choice_overlap" name="overlap">')
    expect(ask.text).toContain('<option value="86400" selected>')
    const refused = await web.post(`/account/oidc-clients/${client.client_id}/rotate-secret`, { csrf_token: csrfOf(ask.text), confirm: 'yes', overlap: '86401' })
    expect(refused.status).toBe(400)
    expect(codeOf(refused.text, 'client_secret')).toBeUndefined()
    expect(await tokenRequest(client.client_id, client.client_secret!)).toMatchObject({ status: 400 })

    const rotated = await web.postAndFollow(`/account/oidc-clients/${client.client_id}/rotate-secret`, { csrf_token: csrfOf(ask.text), confirm: 'yes', overlap: '604800' })
    expect(rotated.posted).toBe(303)
    expect(rotated.status).toBe(200)
    const secret = codeOf(rotated.text, 'client_secret')!
    expect(secret).not.toBe(client.client_secret)
    expect(rotated.text).toContain('data-copy="client_secret"')
    expect(rotated.text).toContain('The secret it replaced keeps working until')
    expect(rotated.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/)
    expect((await web.get('/account/oidc-clients')).text).not.toContain(secret)
    const reload = await web.get(rotated.location!)
    expect(reload.status).toBe(200)
    expect(codeOf(reload.text, 'client_secret')).toBeUndefined()
    expect(reload.text).toContain('The client secret was shown once, on the page after it was made')

    expect(await tokenRequest(client.client_id, client.client_secret!)).toMatchObject({ status: 400 })
    expect(await tokenRequest(client.client_id, secret)).toMatchObject({ status: 400 })
    clock += 604_800_000
    expect(await tokenRequest(client.client_id, client.client_secret!)).toEqual({ status: 401, error: 'invalid_client' })
    expect(await tokenRequest(client.client_id, secret)).toMatchObject({ status: 400 })
  })
})
