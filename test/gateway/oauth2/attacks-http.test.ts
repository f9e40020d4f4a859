// OAuth 2.0 Bearer tokens from the attacker's side (docs/oauth2.md#errors): every spelling
// the gateway refuses (the token in the URL or the form body, two Authorization headers,
// Bearer beside other credentials, a header that is not exactly `Bearer <token>`) changes
// nothing and gets RFC 6750's error; a token altered, signed by another key, of the other
// deployment, or not for the API is 401 invalid_token.
import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SignJWT, decodeJwt } from 'jose'
import { startStack, type Stack } from '../../helpers/stack.js'
import { bearer, codeFlow, discoverOAuth, rawRequest, registerApiClient, redirectUri } from './helpers.js'
import { browse, discover, oidc, registerClient, startSignIn } from '../oidc/helpers.js'

let stack: Stack
let alice: { id: string; name: string; password: string }
let token: string

/** The texts of alice's timeline, as the API shows them. */
async function timeline(): Promise<string> {
  return JSON.stringify((await bearer(stack.url, 'GET', '/api/statuses/user_timeline.json', token)).body)
}

beforeAll(async () => {
  stack = await startStack()
  alice = await stack.addUser('alice', 'Alice Liddell')
  const client = await registerApiClient(stack, { name: 'Looking Glass', owner: 'alice', scopes: ['read_public', 'write_public'] })
  ;({ access_token: token } = await codeFlow(await discoverOAuth(stack.url, client), alice, 'read_public write_public'))
})

afterAll(async () => {
  await stack?.close()
})

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const formType: [string, string] = ['Content-Type', 'application/x-www-form-urlencoded']

describe('the token anywhere but the Authorization header', () => {
  const cases: Array<[string, () => Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>]> = [
    ['in the query', () => rawRequest(stack.url, 'POST', `/api/statuses/update.json?access_token=${token}`, [formType], form({ status: 'via the query' }))],
    ['in the form body', () => rawRequest(stack.url, 'POST', '/api/statuses/update.json', [formType], form({ status: 'via the body', access_token: token }))],
    ['in the form body, its name percent-encoded', () => rawRequest(stack.url, 'POST', '/api/statuses/update.json', [formType], `status=via%20an%20encoded%20name&access%5Ftoken=${token}`)],
    ['in the query beside the header', () => rawRequest(stack.url, 'POST', `/api/statuses/update.json?access_token=${token}`, [['Authorization', `Bearer ${token}`], formType], form({ status: 'via both' }))],
  ]
  for (const [name, send] of cases) {
    it(`${name}: 400 invalid_request with a Bearer challenge, nothing posted`, async () => {
      const res = await send()
      expect(res.status).toBe(400)
      expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'invalid_request' } })
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_request"/)
      expect(await timeline()).not.toContain('via ')
    })
  }

  it('in the query of an anonymous read: refused as well, not read anonymously', async () => {
    const res = await rawRequest(stack.url, 'GET', `/api/statuses/public_timeline.json?access_token=${token}`, [])
    expect(res.status).toBe(400)
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'invalid_request' } })
  })
})

describe('Bearer beside another credential, or twice', () => {
  it('two Authorization headers: 400 multiple_credentials, nothing posted', async () => {
    const res = await rawRequest(stack.url, 'POST', '/api/statuses/update.json', [['Authorization', `Bearer ${token}`], ['Authorization', `Bearer ${token}`], formType], form({ status: 'twice' }))
    expect(res.status).toBe(400)
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'multiple_credentials' } })
    expect(await timeline()).not.toContain('twice')
  })

  it('beside X-WSSE: 400 multiple_credentials with a Bearer invalid_request challenge', async () => {
    const res = await rawRequest(stack.url, 'POST', '/api/statuses/update.json', [['Authorization', `Bearer ${token}`], ['X-WSSE', 'UsernameToken Username="alice", PasswordDigest="x", Nonce="eA==", Created="2026-01-01T00:00:00Z"'], formType], form({ status: 'with wsse' }))
    expect(res.status).toBe(400)
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'multiple_credentials' } })
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_request"$/)
    expect(await timeline()).not.toContain('with wsse')
  })

  it('beside OAuth 1.0a parameters in the query: 400 multiple_credentials', async () => {
    const res = await rawRequest(stack.url, 'POST', '/api/statuses/update.json?oauth_consumer_key=k&oauth_signature=s', [['Authorization', `Bearer ${token}`], formType], form({ status: 'with oauth1' }))
    expect(res.status).toBe(400)
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'multiple_credentials' } })
    expect(await timeline()).not.toContain('with oauth1')
  })
})

describe('the header itself', () => {
  it('the scheme in any case is accepted, as for Basic, WSSE and OAuth', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await rawRequest(stack.url, 'GET', '/api/statuses/user_timeline.json', [['Authorization', `${scheme} ${token}`]])
      expect(res.status).toBe(200)
    }
  })

  for (const [name, value] of [
    ['two spaces', () => `Bearer  ${token}`],
    ['a tab', () => `Bearer\t${token}`],
    ['something after the token', () => `Bearer ${token} extra`],
    ['a comma after the token', () => `Bearer ${token},`],
    ['the token quoted', () => `Bearer "${token}"`],
    ['no token', () => 'Bearer'],
    ['an auth-param instead of the token', () => `Bearer access_token="${token}"`],
  ] as const) {
    it(`${name}: 400 invalid_request, nothing posted`, async () => {
      const res = await rawRequest(stack.url, 'POST', '/api/statuses/update.json', [['Authorization', value()], formType], form({ status: `spelled with ${name}` }))
      expect(res.status).toBe(400)
      expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'invalid_request' } })
      expect(res.headers['www-authenticate']).toContain('error="invalid_request"')
      expect(await timeline()).not.toContain('spelled with')
    })
  }
})

describe('tokens that are not a live access token of this deployment\'s API', () => {
  const refused = async (value: string, base = stack.url) => {
    const res = await bearer(base, 'POST', '/api/statuses/update.json', value, { status: 'must not appear' })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ error: { code: 'invalid_token' } })
    expect(res.challenge).toMatch(/^Bearer realm="[^"]+", error="invalid_token", error_description="[^"]+"$/)
    expect(await timeline()).not.toContain('must not appear')
  }

  it('its signature altered', async () => {
    const [h, p, s] = token.split('.')
    await refused(`${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`)
  })

  it('its claims changed (another user) under the same signature', async () => {
    const [h, , s] = token.split('.')
    const claims = { ...decodeJwt(token), sub: 'mallory' }
    await refused(`${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`)
  })

  it('signed by a key that is not the provider\'s, with the same claims and kid', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }
    const forged = await new SignJWT(decodeJwt(token)).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: header.kid }).sign(privateKey)
    await refused(forged)
  })

  it('with alg none', async () => {
    const [, p] = token.split('.')
    await refused(`${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`)
  })

  it('presented at the other deployment', async () => {
    await refused(token, stack.globalUrl)
  })

  it('an access token for userinfo (a sign-in without the API)', async () => {
    const site = await registerClient(stack, { name: 'Sign-in only', owner: 'alice', redirect_uris: [redirectUri] })
    const config = await discover(stack.url, site)
    const started = await startSignIn(config, redirectUri)
    const { callback } = await browse(started.url, redirectUri, alice)
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    await refused(tokens.access_token)
  })

  it('not a token at all', async () => {
    await refused('abc.def.ghi')
  })
})
