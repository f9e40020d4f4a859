// The benchmark's required-work proxy is only a fair floor if it does the work for real:
// a valid Basic, WSSE or OAuth request reaches the upstream with an identity the core
// would accept, and a wrong secret, a replayed nonce or a wrong signature does not. So is an
// OAuth 2.0 access token: a JWT of the issuer's key, type, audience and lifetime.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { SignJWT } from 'jose'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildRequiredWorkProxy } from '../../bench/required-work-proxy.js'
import { basicAuthorization, oauthAuthorization, wsseHeader } from '../../bench/signing.js'
import { identityKey, verifyIdentity } from '../../src/common/identity.js'
import { availableRedis } from '../helpers/services.js'

const redisUrl = await availableRedis()

describe.skipIf(redisUrl === null)('required-work proxy', () => {
  const secretKey = randomBytes(32).toString('base64')
  const user = { id: 'bench', apiPassword: 'correct horse battery' }
  const token = { consumerKey: 'ck', consumerSecret: 'cs-secret', token: 'tk', tokenSecret: 'ts-secret' }
  const host = 'localhost:8080'
  const path = '/api/statuses/show/1.json'
  let upstream: Server
  let proxy: FastifyInstance
  let proxyUrl = ''
  const seen: IncomingHttpHeaders[] = []
  const issuer = `http://${host}`
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwk = { ...signing.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }
  const accessToken = (o: { typ?: string; aud?: string; expiresIn?: string; key?: typeof signing.privateKey } = {}) =>
    new SignJWT({ scope: 'read_public', client_id: 'client-1', kigo_grant: 'g1' })
      .setProtectedHeader({ alg: 'RS256', typ: o.typ ?? 'at+jwt', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(o.aud ?? `${issuer}/api`)
      .setSubject(user.id)
      .setJti(randomBytes(8).toString('hex'))
      .setIssuedAt()
      .setExpirationTime(o.expiresIn ?? '1h')
      .sign(o.key ?? signing.privateKey)

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.headers)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
    const built = await buildRequiredWorkProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, redisUrl: redisUrl!, secretKey, fixture: { user, tokens: [token], bearer: { issuer, keys: [jwk] } } })
    proxy = built.app
    proxyUrl = await proxy.listen({ host: '127.0.0.1', port: 0 })
  })

  afterAll(async () => {
    await proxy?.close()
    await new Promise((r) => upstream?.close(r))
  })

  const send = async (headers: Record<string, string>) => {
    const before = seen.length
    const res = await request(`${proxyUrl}${path}`, { headers: { host, ...headers } })
    await res.body.dump()
    return { status: res.statusCode, forwarded: seen.length > before ? seen.at(-1)! : null }
  }
  const identityOf = (headers: IncomingHttpHeaders) => {
    const check = verifyIdentity(identityKey(secretKey), headers, { method: 'GET', url: path, host }, 60)
    return check.ok ? check.identity : null
  }

  it('forwards valid Basic, WSSE and OAuth requests with a verifiable identity and no credentials', async () => {
    const oauth = oauthAuthorization(token, { method: 'GET', baseUri: `http://${host}${path}` })
    for (const [method, headers] of [
      ['basic', { authorization: basicAuthorization(user.id, user.apiPassword) }],
      ['wsse', { 'x-wsse': wsseHeader(user.id, user.apiPassword), authorization: 'WSSE profile="UsernameToken"' }],
      ['oauth', { authorization: oauth }],
    ] as const) {
      const { status, forwarded } = await send(headers)
      expect(status, method).toBe(200)
      expect(identityOf(forwarded!), method).toMatchObject({ user: user.id, authMethod: method })
      expect(forwarded!.authorization, method).toBeUndefined()
      expect(forwarded!['x-wsse'], method).toBeUndefined()
    }
  })

  it('forwards a valid OAuth 2.0 access token as the token\'s user and client, and refuses one of another key, type, audience or lifetime', async () => {
    const { status, forwarded } = await send({ authorization: `Bearer ${await accessToken()}` })
    expect(status).toBe(200)
    expect(identityOf(forwarded!)).toMatchObject({ user: user.id, authMethod: 'oauth', consumer: 'client-1', scopes: ['read_public'] })
    expect(forwarded!.authorization).toBeUndefined()
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
    for (const bad of [{ key: otherKey }, { typ: 'JWT' }, { aud: issuer }, { expiresIn: '-1m' }]) {
      expect(await send({ authorization: `Bearer ${await accessToken(bad)}` }), JSON.stringify(Object.keys(bad))).toEqual({ status: 401, forwarded: null })
    }
    expect(await send({ authorization: 'Bearer not.a.jwt' })).toEqual({ status: 401, forwarded: null })
  })

  it('forwards an anonymous request without the identity headers the client sent, with its own request ID and X-Forwarded-* (docs/gateway.md#forwarding)', async () => {
    const { status, forwarded } = await send({ 'x-kigo-user': 'bench', 'x-kigo-auth-method': 'basic', 'x-kigo-request-id': 'from-client', 'user-agent': 'kept' })
    expect(status).toBe(200)
    expect(Object.keys(forwarded!).filter((h) => h.startsWith('x-kigo-'))).toEqual(['x-kigo-request-id'])
    expect(forwarded!['x-kigo-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(forwarded!['user-agent']).toBe('kept')
    expect(forwarded!).toMatchObject({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-host': host })
  })

  it('refuses a wrong password, a replayed nonce and a wrong signature without forwarding them', async () => {
    expect(await send({ authorization: basicAuthorization(user.id, 'wrong') })).toEqual({ status: 401, forwarded: null })
    const wsse = wsseHeader(user.id, user.apiPassword)
    expect((await send({ 'x-wsse': wsse })).status).toBe(200)
    expect(await send({ 'x-wsse': wsse })).toEqual({ status: 401, forwarded: null })
    const forged = oauthAuthorization({ ...token, tokenSecret: 'not-it' }, { method: 'GET', baseUri: `http://${host}${path}` })
    expect(await send({ authorization: forged })).toEqual({ status: 401, forwarded: null })
    const oauth = oauthAuthorization(token, { method: 'GET', baseUri: `http://${host}${path}` })
    expect((await send({ authorization: oauth })).status).toBe(200)
    expect(await send({ authorization: oauth })).toEqual({ status: 401, forwarded: null })
    // Bad percent-encoding is a credential that does not hold, not a failure of the proxy.
    expect(await send({ authorization: 'OAuth oauth_consumer_key="ck", oauth_token="%E0%A4%A", oauth_signature="x"' })).toEqual({ status: 401, forwarded: null })
  })
})
