// verifyOAuth: every rejection of docs/gateway.md#oauth-10a, with requests signed by npm oauth-sign.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { verifyOAuth, type OAuthVerifyOptions } from '../../../../src/gateway/auth/oauth/verify.js'
import type { AuthRequest } from '../../../../src/gateway/domain/auth.js'
import { authRequest, DownReplayCache, form, MemoryReplayCache, memoryLookup } from '../fixtures.js'
import { authorizationHeader, signedRequest, signParameters, type SignOptions } from './oauth-sign-client.js'

const opts: OAuthVerifyOptions = { windowSeconds: 300, hmacSha256: true, plaintext: false }
const now = 1_800_000_000_000
const app = { key: 'app-key-1', secret: 'app secret & more' }
const other = { key: 'app-key-2', secret: 'other-secret' }
const alice = { token: 'alice-token', secret: 'alice/secret+=' }
const credentials: Parameters<typeof memoryLookup>[0] = {
  users: [{ id: 'alice', name: 'Alice Liddell', apiPassword: 'unused' }],
  consumers: [app, other],
  tokens: [
    { ...alice, consumerKey: app.key, userId: 'alice', scopes: ['read_public', 'write_public'] },
    { token: 'revoked-token', secret: 'rs', consumerKey: app.key, userId: 'alice', revoked: true },
    { token: 'other-token', secret: 'os', consumerKey: other.key, userId: 'alice' },
  ],
}
const lookup = memoryLookup(credentials)
const base: SignOptions = {
  consumer: app,
  token: alice,
  now,
  url: '/api/statuses/update.json?source=test',
  body: 'keyword=kigo&status=Hello+world%21',
}

async function verify(req: AuthRequest, replay = new MemoryReplayCache(() => now), o = opts) {
  return verifyOAuth(req, lookup, replay, o)
}

describe('verifyOAuth accepts', () => {
  it('a request signed with HMAC-SHA1, carrying the token user and scopes', async () => {
    expect(await verify(signedRequest(base))).toEqual({
      kind: 'ok',
      principal: { userId: 'alice', userName: 'Alice Liddell', method: 'oauth', consumerKey: app.key, scopes: ['read_public', 'write_public'] },
    })
  })

  it('HMAC-SHA256 when enabled, and refuses it with 400 when disabled', async () => {
    const req = signedRequest({ ...base, signatureMethod: 'HMAC-SHA256' })
    expect((await verify(req)).kind).toBe('ok')
    expect(await verify(req, undefined, { ...opts, hmacSha256: false })).toMatchObject({ status: 400, code: 'signature_method_rejected' })
  })

  it('oauth_version 1.0, and a header without spaces after commas', async () => {
    const params = signParameters({ ...base, extra: { oauth_version: '1.0' } })
    const header = 'OAuth ' + Object.entries(params).map(([k, v]) => `${k}="${encodeURIComponent(v)}"`).join(',')
    const req = authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: form, body: base.body!, now, headers: { authorization: header } })
    expect((await verify(req)).kind).toBe('ok')
  })

  it('timestamps at the edges of the window', async () => {
    expect((await verify(signedRequest({ ...base, timestamp: now / 1000 - 300 }))).kind).toBe('ok')
    expect((await verify(signedRequest({ ...base, timestamp: now / 1000 + 300 }))).kind).toBe('ok')
  })
})

describe('verifyOAuth refuses', () => {
  it('a replayed nonce (401 nonce_used), claimed for twice the window', async () => {
    const replay = new MemoryReplayCache(() => now)
    const req = signedRequest(base)
    expect((await verify(req, replay)).kind).toBe('ok')
    expect(await verify(req, replay)).toMatchObject({ kind: 'fail', status: 401, code: 'nonce_used', outcome: 'replay' })
    expect(replay.claims[0]!.ttlSeconds).toBeGreaterThanOrEqual(600)
  })

  it('the same nonce percent-encoded differently in the header', async () => {
    const replay = new MemoryReplayCache(() => now)
    const params = signParameters({ ...base, nonce: 'n o~nce' })
    const first = authorizationHeader(params) // oauth_nonce="n%20o~nce"
    const second = first.replace('oauth_nonce="n%20o~nce"', 'oauth_nonce="n%20o%7Ence"')
    expect(second).not.toBe(first)
    const req = (authorization: string) => authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: form, body: base.body!, now, headers: { authorization } })
    expect((await verify(req(first), replay)).kind).toBe('ok')
    expect(await verify(req(second), replay)).toMatchObject({ status: 401, code: 'nonce_used' })
  })

  it('does not spend the nonce of a request that failed verification', async () => {
    const replay = new MemoryReplayCache(() => now)
    const good = signedRequest({ ...base, nonce: 'once' })
    const bad = { ...good, method: 'PUT' }
    expect(await verify(bad, replay)).toMatchObject({ code: 'signature_invalid' })
    expect((await verify(good, replay)).kind).toBe('ok')
  })

  it.each([
    ['stale', -301],
    ['future', 301],
  ])('a %s timestamp (401 timestamp_refused with the acceptable range)', async (_name, offset) => {
    const result = await verify(signedRequest({ ...base, timestamp: now / 1000 + offset }))
    expect(result).toMatchObject({
      kind: 'fail',
      status: 401,
      code: 'timestamp_refused',
      outcome: 'stale',
      oauthProblem: { oauth_acceptable_timestamps: `${now / 1000 - 300}-${now / 1000 + 300}` },
    })
  })

  it.each<[string, (r: AuthRequest) => AuthRequest]>([
    ['method', (r) => ({ ...r, method: 'PUT' })],
    ['host', (r) => ({ ...r, host: 'evil.example.com' })],
    ['port', (r) => ({ ...r, host: 'api.example.com:8080' })],
    ['scheme', (r) => ({ ...r, scheme: 'https' })],
    ['path', (r) => ({ ...r, url: r.url.replace('update', 'destroy') })],
    ['query', (r) => ({ ...r, url: r.url + '&extra=1' })],
    ['query value', (r) => ({ ...r, url: r.url.replace('source=test', 'source=tost') })],
    ['body', (r) => ({ ...r, body: Buffer.from('keyword=kigo&status=Hello+world%3F') })],
  ])('a tampered %s (401 signature_invalid)', async (_what, tamper) => {
    expect(await verify(tamper(signedRequest(base)))).toMatchObject({ kind: 'fail', status: 401, code: 'signature_invalid', outcome: 'bad_signature' })
  })

  it('a bad signature sent in the query', async () => {
    const params = signParameters({ ...base, method: 'GET', body: undefined, url: '/api/x.json' })
    const query = Object.entries({ ...params, oauth_signature: 'AAAA' + params.oauth_signature!.slice(4) })
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&')
    expect(await verify(authRequest({ method: 'GET', host: 'api.example.com', url: `/api/x.json?${query}`, now }))).toMatchObject({ status: 401, code: 'signature_invalid' })
  })

  it('protocol parameters from two places (400 parameter_rejected)', async () => {
    const req = signedRequest(base)
    expect(await verify({ ...req, url: req.url + '&oauth_callback=oob' })).toMatchObject({ kind: 'fail', status: 400, code: 'parameter_rejected' })
    expect(await verify({ ...req, body: Buffer.from(base.body + '&oauth_nonce=x') })).toMatchObject({ status: 400, code: 'parameter_rejected' })
  })

  it('a repeated protocol parameter (400 parameter_rejected)', async () => {
    const req = signedRequest(base)
    const authorization = (req.headers.authorization as string) + ', oauth_nonce="again"'
    expect(await verify({ ...req, headers: { authorization } })).toMatchObject({ status: 400, code: 'parameter_rejected' })
    const inQuery = authRequest({ url: '/x?oauth_consumer_key=a&oauth_consumer_key=a&oauth_signature=s', now })
    expect(await verify(inQuery)).toMatchObject({ status: 400, code: 'parameter_rejected' })
  })

  it('malformed percent-encoding and malformed headers (400)', async () => {
    const req = signedRequest(base)
    const h = req.headers.authorization as string
    expect(await verify({ ...req, headers: { authorization: h.replace(/oauth_nonce="[^"]*"/, 'oauth_nonce="%ZZ"') } })).toMatchObject({ status: 400, code: 'parameter_rejected' })
    expect(await verify({ ...req, headers: { authorization: h.slice(0, -1) } })).toMatchObject({ status: 400, code: 'parameter_rejected' })
    expect(await verify({ ...req, headers: { authorization: 'OAuth oauth_nonce' } })).toMatchObject({ status: 400, code: 'parameter_rejected' })
    expect(await verify({ ...req, body: Buffer.from([0x61, 0x3d, 0xff]) })).toMatchObject({ status: 400, code: 'parameter_rejected' })
    expect(await verify({ ...req, url: '/api/statuses/update.json?q=%E6%97' })).toMatchObject({ status: 400, code: 'parameter_rejected' })
  })

  it.each([
    ['RSA-SHA1', 'signature_method_rejected'],
    ['HMAC-MD5', 'signature_method_rejected'],
  ])('signature method %s (400 %s)', async (method, code) => {
    const params = { ...signParameters(base), oauth_signature_method: method }
    const req = authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: form, body: base.body!, now, headers: { authorization: authorizationHeader(params) } })
    expect(await verify(req)).toMatchObject({ status: 400, code, outcome: 'malformed' })
  })

  it('an oauth_version other than 1.0 (400 version_rejected)', async () => {
    expect(await verify(signedRequest({ ...base, extra: { oauth_version: '2.0' } }))).toMatchObject({ status: 400, code: 'version_rejected' })
  })

  it('missing parameters (400 parameter_absent naming them)', async () => {
    const { oauth_nonce: _n, oauth_token: _t, ...params } = signParameters(base)
    const req = authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: form, body: base.body!, now, headers: { authorization: authorizationHeader(params) } })
    expect(await verify(req)).toMatchObject({
      status: 400,
      code: 'parameter_absent',
      oauthProblem: { oauth_parameters_absent: 'oauth_token&oauth_nonce' },
    })
    expect(await verify(authRequest({ headers: { authorization: 'OAuth realm="kigo"' }, now }))).toMatchObject({
      status: 400,
      oauthProblem: { oauth_parameters_absent: 'oauth_consumer_key&oauth_token&oauth_signature_method&oauth_signature&oauth_timestamp&oauth_nonce' },
    })
  })

  it('an unknown consumer (401 consumer_key_unknown), still loading and signing', async () => {
    const before = lookup.calls.length
    const result = await verify(signedRequest({ ...base, consumer: { key: 'nobody', secret: 'x' } }))
    expect(result).toMatchObject({ status: 401, code: 'consumer_key_unknown', outcome: 'unknown_client' })
    expect(lookup.calls.slice(before)).toEqual(['consumer:nobody', `accessToken:${alice.token}`])
  })

  it('an unknown token (401 token_rejected)', async () => {
    expect(await verify(signedRequest({ ...base, token: { token: 'nope', secret: 'x' } }))).toMatchObject({ status: 401, code: 'token_rejected' })
  })

  it("another consumer's token (401 token_rejected), even correctly signed", async () => {
    expect(await verify(signedRequest({ ...base, token: { token: 'other-token', secret: 'os' } }))).toMatchObject({ status: 401, code: 'token_rejected' })
  })

  it('a revoked token (401 token_revoked)', async () => {
    expect(await verify(signedRequest({ ...base, token: { token: 'revoked-token', secret: 'rs' } }))).toMatchObject({ status: 401, code: 'token_revoked' })
  })

  it('a nonce when the replay cache is down (503 unavailable with Retry-After)', async () => {
    expect(await verifyOAuth(signedRequest(base), lookup, new DownReplayCache(), opts)).toMatchObject({
      kind: 'fail',
      status: 503,
      outcome: 'unavailable',
      retryAfterSeconds: 5,
    })
  })
})

describe('oauth_body_hash', () => {
  const json = '{"status":"hello"}'
  const hashed = (algorithm: string, body: string) => createHash(algorithm).update(body).digest('base64')
  const jsonRequest = (hash: string, body: string, signatureMethod: SignOptions['signatureMethod'] = 'HMAC-SHA1') => {
    const params = signParameters({ ...base, body: undefined, signatureMethod, extra: { oauth_body_hash: hash } })
    return authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: 'application/json', body, now, headers: { authorization: authorizationHeader(params) } })
  }

  it('accepts a matching SHA-1 hash, and SHA-256 with HMAC-SHA256', async () => {
    expect((await verify(jsonRequest(hashed('sha1', json), json))).kind).toBe('ok')
    expect((await verify(jsonRequest(hashed('sha256', json), json, 'HMAC-SHA256'))).kind).toBe('ok')
  })

  it('refuses a body that does not match its hash (401 signature_invalid)', async () => {
    expect(await verify(jsonRequest(hashed('sha1', json), '{"status":"evil"}'))).toMatchObject({ status: 401, code: 'signature_invalid' })
  })

  it('a streamed body: its hash is handed over only once the signature verified, never for a bad signature', async () => {
    const handed: Array<[string, string]> = []
    const streamed = (hash: string, signatureMethod: SignOptions['signatureMethod'] = 'HMAC-SHA1', tamper = false) => {
      const params = signParameters({ ...base, body: undefined, signatureMethod, extra: { oauth_body_hash: hash } })
      if (tamper) params.oauth_signature = 'garbage'
      return { ...authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: 'application/json', now, headers: { authorization: authorizationHeader(params) } }), deferBodyHash: (a: string, e: string) => void handed.push([a, e]) }
    }
    expect(await verify(streamed(hashed('sha1', json), 'HMAC-SHA1', true))).toMatchObject({ status: 401, code: 'signature_invalid' })
    expect(handed).toEqual([])
    expect((await verify(streamed(hashed('sha1', json)))).kind).toBe('ok')
    expect((await verify(streamed(hashed('sha256', json), 'HMAC-SHA256'))).kind).toBe('ok')
    expect(handed).toEqual([['sha1', hashed('sha1', json)], ['sha256', hashed('sha256', json)]])
    // Not a digest of the right length: refused without handing anything over.
    expect(await verify(streamed(hashed('sha256', json)))).toMatchObject({ status: 401, code: 'signature_invalid' })
    expect(handed).toHaveLength(2)
  })

  it('refuses oauth_body_hash with a form body (400)', async () => {
    const params = signParameters({ ...base, extra: { oauth_body_hash: hashed('sha1', base.body!) } })
    const req = authRequest({ method: 'POST', host: 'api.example.com', url: base.url!, contentType: form, body: base.body!, now, headers: { authorization: authorizationHeader(params) } })
    expect(await verify(req)).toMatchObject({ status: 400, code: 'parameter_rejected' })
  })
})
