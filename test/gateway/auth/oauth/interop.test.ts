// Interop: requests signed by independent OAuth client libraries verify through
// verifyOAuth. The npm `oauth` client really sends its requests to a local server, and
// what arrives (request line, headers, body) is what is verified.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OAuth } from 'oauth'
import { oauth1aClient, type HmacMethod } from '../../../helpers/oauth1a.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyOAuth, type OAuthVerifyOptions } from '../../../../src/gateway/auth/oauth/verify.js'
import type { AuthRequest } from '../../../../src/gateway/domain/auth.js'
import { authRequest, form, MemoryReplayCache, memoryLookup } from '../fixtures.js'
import { oauthSign } from './oauth-sign-client.js'

const opts: OAuthVerifyOptions = { windowSeconds: 300, hmacSha256: true, plaintext: false }
const app = { key: 'interop-app', secret: "s3cret!*'()" }
const token = { token: 'interop-token', secret: 'tok en/secret' }
const lookup = memoryLookup({
  users: [{ id: 'carol', name: 'Carol', apiPassword: 'unused' }],
  consumers: [app],
  tokens: [{ ...token, consumerKey: app.key, userId: 'carol', scopes: ['write_public'] }],
})
const verify = (req: AuthRequest) => verifyOAuth(req, lookup, new MemoryReplayCache(), opts)

describe('npm oauth (OAuth class), over HTTP', () => {
  let server: Server
  let origin = ''
  const received: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: Buffer }> = []

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) })
        res.end('ok')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const asAuthRequest = (r: (typeof received)[number]): AuthRequest =>
    authRequest({
      method: r.method,
      url: r.url,
      host: r.headers.host!,
      scheme: 'http',
      headers: r.headers,
      contentType: r.headers['content-type'],
      body: r.body.length > 0 ? r.body : undefined,
      now: Date.now(),
    })

  const send = (fn: (done: (err: unknown) => void) => void) =>
    new Promise<void>((resolve, reject) => fn((err) => (err ? reject(new Error(JSON.stringify(err))) : resolve())))

  it.each(['HMAC-SHA1', 'HMAC-SHA256'])('POST with a form body (%s)', async (method) => {
    const client = new OAuth('', '', app.key, app.secret, '1.0', null, method)
    received.length = 0
    await send((done) =>
      client.post(`${origin}/api/statuses/update.json?source=interop`, token.token, token.secret, { keyword: 'test kw', status: 'Hello Ladies + Gentlemen, 日本語!' }, form, done),
    )
    const r = received[0]!
    expect(r.headers.authorization).toMatch(/^OAuth /)
    expect(await verify(asAuthRequest(r))).toMatchObject({ kind: 'ok', principal: { userId: 'carol', scopes: ['write_public'] } })
    // What it signed is what arrived: a changed body fails.
    expect(await verify({ ...asAuthRequest(r), body: Buffer.from('keyword=other') })).toMatchObject({ code: 'signature_invalid' })
  })

  it('GET with a query', async () => {
    const client = new OAuth('', '', app.key, app.secret, '1.0', null, 'HMAC-SHA1')
    received.length = 0
    await send((done) => client.get(`${origin}/api/statuses/show/123.json?body_formats=html,haiku&callback=cb`, token.token, token.secret, done))
    expect(await verify(asAuthRequest(received[0]!))).toMatchObject({ kind: 'ok' })
  })
})

describe('npm oauth-sign', () => {
  it.each([
    ['HMAC-SHA1', oauthSign.hmacsign],
    ['HMAC-SHA256', oauthSign.hmacsign256],
  ] as const)('%s signatures verify', async (method, sign) => {
    const protocol = {
      oauth_consumer_key: app.key,
      oauth_token: token.token,
      oauth_signature_method: method,
      oauth_timestamp: String(Math.floor(Date.now() / 1000)),
      oauth_nonce: 'oauth-sign-nonce',
      oauth_version: '1.0',
    }
    const signature = sign('POST', 'https://kigo.example/api/favorites/create/42.json', { ...protocol, source: 'a b', tag: ['x', 'y'] }, app.secret, token.secret)
    const header = 'OAuth ' + Object.entries({ ...protocol, oauth_signature: signature }).map(([k, v]) => `${k}="${oauthSign.rfc3986(v)}"`).join(',')
    const req = authRequest({ method: 'POST', scheme: 'https', host: 'KIGO.example:443', url: '/api/favorites/create/42.json?source=a+b&tag=y&tag=x', headers: { authorization: header } })
    expect(await verify(req)).toMatchObject({ kind: 'ok' })
  })
})

describe('npm oauth-1.0a', () => {
  const client = (method: HmacMethod) => oauth1aClient({ key: app.key, secret: app.secret }, method)
  const url = 'http://127.0.0.1:8765/api/statuses/update.json'

  it.each(['HMAC-SHA1', 'HMAC-SHA256'] as const)('%s with a form body, in the header', async (method) => {
    const c = client(method)
    const data = { keyword: 'kigo', status: 'Hello, world! ~*' }
    const header = c.toHeader(c.authorize({ url, method: 'POST', data }, { key: token.token, secret: token.secret }))
    const body = new URLSearchParams(data).toString()
    const req = authRequest({ method: 'POST', host: '127.0.0.1:8765', url: '/api/statuses/update.json', contentType: form, body, headers: { authorization: header.Authorization } })
    expect(await verify(req)).toMatchObject({ kind: 'ok' })
  })

  it('a JSON body with oauth_body_hash', async () => {
    const c = client('HMAC-SHA1')
    const json = '{"status":"hello"}'
    const header = c.toHeader(c.authorize({ url, method: 'POST', data: json, includeBodyHash: true }, { key: token.token, secret: token.secret }))
    const req = (body: string) =>
      authRequest({ method: 'POST', host: '127.0.0.1:8765', url: '/api/statuses/update.json', contentType: 'application/json', body, headers: { authorization: header.Authorization } })
    expect(header.Authorization).toContain('oauth_body_hash=')
    expect(await verify(req(json))).toMatchObject({ kind: 'ok' })
    expect(await verify(req('{"status":"evil"}'))).toMatchObject({ status: 401, code: 'signature_invalid' })
  })
})
