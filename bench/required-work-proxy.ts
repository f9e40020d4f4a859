// The floor under the gateway's authenticated figures (docs/performance.md#the-groups-and-their-keys, `required_*`): Fastify forwarding with
// the gateway's own forwarder (src/gateway/proxy/forward.ts: undici's pool, small answers
// sent in one write; faster than the bare reply-from proxy of bare-proxy.ts), plus only
// the work no authenticating gateway can skip, written the shortest way: read the
// credential, check it against the one user and the tokens it was told (no store, no
// cache, no throttling, no policy, no usage, no metrics, no logs), claim the WSSE or OAuth
// nonce in Redis (SET NX with an expiry, ioredis with auto-pipelining as in the gateway),
// for an OAuth 2.0 access token verify the JWT's RS256 signature with the issuer's public key
// and its type, issuer, audience and expiry (once a token: a token verified before is
// looked up), and look its grant up in a revocation set,
// sign the identity the core checks (src/common/identity.ts), and forward with what
// docs/gateway.md#forwarding asks of every forward: the client's own X-Kigo-* headers removed,
// X-Kigo-Request-Id and X-Forwarded-For/Proto/Host set (an anonymous request's whole
// required work). A request whose credential does not hold gets 401.
// The gateway's rate over this one says how much of the distance to the bare proxy is
// kigo's own; this one's rate over the bare proxy, how far the required work alone lets
// a gateway come on this machine.
//
// Run as its own process: REQUIRED_PROXY_PORT, REQUIRED_PROXY_UPSTREAM, REDIS_URL,
// KIGO_SECRET_KEY, REQUIRED_PROXY_FIXTURE (JSON: the user, the OAuth tokens, the OAuth 2.0 issuer and keys).
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { createHash, createHmac, createPublicKey, randomUUID, verify, type JsonWebKey, type KeyObject } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import { identityKey, type Identity } from '../src/common/identity.js'
import { operationNameOf } from '../src/common/route-table.js'
import { safeEqual } from '../src/common/secrets.js'
import { percentEncode } from '../src/gateway/auth/oauth/percent-encode.js'
import { registerForwarding } from '../src/gateway/proxy/forward.js'
import type { OAuthCredentials } from './signing.js'
import type { BearerFixture } from './scenarios.js'

export interface RequiredWorkFixture {
  user: { id: string; apiPassword: string }
  tokens: OAuthCredentials[]
  /** The OAuth 2.0 issuer and its public keys; no Bearer token holds without them. */
  bearer?: Pick<BearerFixture, 'issuer' | 'keys'>
}

export interface RequiredWorkOptions {
  upstream: string
  redisUrl: string
  secretKey: string
  fixture: RequiredWorkFixture
}

const windowSeconds = 300


function quotedParams(header: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of header.matchAll(/([A-Za-z_]+)="([^"]*)"/g)) out.set(m[1]!, m[2]!)
  return out
}

export async function buildRequiredWorkProxy(options: RequiredWorkOptions): Promise<{ app: FastifyInstance; redis: Redis }> {
  const redis = new Redis(options.redisUrl, { enableAutoPipelining: true, maxRetriesPerRequest: 0 })
  const key: KeyObject = identityKey(options.secretKey)
  const { user } = options.fixture
  const tokens = new Map(options.fixture.tokens.map((t) => [t.token, t]))
  const claim = async (kind: string, id: string) => (await redis.set(`bench:nonce:${kind}:${id}`, '1', 'EX', windowSeconds * 2, 'NX')) === 'OK'
  const fresh = (seconds: number) => Math.abs(Date.now() / 1000 - seconds) <= windowSeconds

  const basic = (authorization: string): Identity | null => {
    const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (decoded.slice(0, colon) !== user.id || !safeEqual(decoded.slice(colon + 1), user.apiPassword)) return null
    return { user: user.id, userName: user.id, authMethod: 'basic', consumer: '', scopes: [] }
  }

  const wsse = async (header: string): Promise<Identity | null> => {
    const p = quotedParams(header)
    const nonce = p.get('Nonce') ?? ''
    const created = p.get('Created') ?? ''
    if (p.get('Username') !== user.id || !fresh(Date.parse(created) / 1000)) return null
    const digest = createHash('sha1').update(Buffer.from(nonce, 'base64')).update(created).update(user.apiPassword).digest('base64')
    if (!safeEqual(digest, p.get('PasswordDigest') ?? '')) return null
    if (!(await claim('wsse', nonce))) return null
    return { user: user.id, userName: user.id, authMethod: 'wsse', consumer: '', scopes: [] }
  }

  const oauth = async (request: FastifyRequest, authorization: string): Promise<Identity | null> => {
    try {
      return await verifiedOAuth(request, authorization)
    } catch (err) {
      // Bad percent-encoding in the header or the query: a credential that does not hold.
      if (err instanceof URIError) return null
      throw err
    }
  }

  const verifiedOAuth = async (request: FastifyRequest, authorization: string): Promise<Identity | null> => {
    const protocol = quotedParams(authorization)
    const token = tokens.get(decodeURIComponent(protocol.get('oauth_token') ?? ''))
    if (!token || decodeURIComponent(protocol.get('oauth_consumer_key') ?? '') !== token.consumerKey) return null
    if (protocol.get('oauth_signature_method') !== 'HMAC-SHA1' || !fresh(Number(protocol.get('oauth_timestamp')))) return null
    // Every parameter but the signature, from the header and the query, encoded and sorted.
    const pairs: Array<[string, string]> = []
    for (const [k, v] of protocol) if (k !== 'oauth_signature' && k !== 'realm') pairs.push([k, decodeURIComponent(v)])
    const q = request.url.indexOf('?')
    if (q >= 0) for (const [k, v] of new URLSearchParams(request.url.slice(q + 1))) pairs.push([k, v])
    const normalized = pairs
      .map(([k, v]) => [percentEncode(k), percentEncode(v)])
      .sort(([a, x], [b, y]) => (a! < b! ? -1 : a! > b! ? 1 : x! < y! ? -1 : x! > y! ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&')
    const path = q >= 0 ? request.url.slice(0, q) : request.url
    const base = `${request.method}&${percentEncode(`http://${(request.headers.host ?? '').toLowerCase()}${path}`)}&${percentEncode(normalized)}`
    const expected = createHmac('sha1', `${percentEncode(token.consumerSecret)}&${percentEncode(token.tokenSecret)}`).update(base).digest('base64')
    if (!safeEqual(expected, decodeURIComponent(protocol.get('oauth_signature') ?? ''))) return null
    if (!(await claim('oauth', `${token.consumerKey}:${protocol.get('oauth_nonce') ?? ''}`))) return null
    return { user: user.id, userName: user.id, authMethod: 'oauth', consumer: token.consumerKey, scopes: ['read_public'] }
  }

  // The issuer's public keys by kid; a grant revoked is refused (the gateway's revocation
  // list is kept in memory as this set is).
  const publicKeys = new Map((options.fixture.bearer?.keys ?? []).map((jwk) => [String(jwk.kid), createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })]))
  const issuer = options.fixture.bearer?.issuer ?? ''
  const audience = `${issuer}/api`
  const revokedGrants = new Set<string>()
  const fromBase64url = (part: string): Record<string, unknown> | null => {
    try {
      const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
      return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null
    } catch {
      return null
    }
  }
  // A token verified once is remembered until it expires, as the gateway does: its expiry
  // and its grant's revocation are what each request still checks.
  const verifiedTokens = new Map<string, { identity: Identity; exp: number; grant: string }>()
  const bearer = (authorization: string): Identity | null => {
    const jwt = authorization.slice(7)
    const known = verifiedTokens.get(jwt)
    if (known !== undefined) return known.exp > Date.now() / 1000 && !revokedGrants.has(known.grant) ? known.identity : null
    const [h = '', p = '', sig = ''] = jwt.split('.')
    const header = fromBase64url(h)
    const key = publicKeys.get(String(header?.kid))
    if (!header || header.alg !== 'RS256' || header.typ !== 'at+jwt' || !key) return null
    if (!verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(sig, 'base64url'))) return null
    const claims = fromBase64url(p)
    if (!claims || claims.iss !== issuer || claims.aud !== audience || typeof claims.exp !== 'number' || claims.exp <= Date.now() / 1000) return null
    if (typeof claims.sub !== 'string' || typeof claims.client_id !== 'string' || typeof claims.kigo_grant !== 'string' || revokedGrants.has(claims.kigo_grant)) return null
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : []
    const identity: Identity = { user: claims.sub, userName: user.id, authMethod: 'oauth', consumer: claims.client_id, scopes }
    if (verifiedTokens.size < 10_000) verifiedTokens.set(jwt, { identity, exp: claims.exp, grant: claims.kigo_grant })
    return identity
  }

  // Request ids as the gateway makes them (src/gateway/app.ts): forwarded as X-Kigo-Request-Id.
  const app = Fastify({ logger: false, genReqId: () => randomUUID() })
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  const forwardOn = registerForwarding(app, { coreUrl: options.upstream, timeoutMs: 10_000, identityKey: key, stripCredentials: true })
  const forward = (request: FastifyRequest, reply: FastifyReply, identity: Identity | null, credentialGiven: boolean): void => {
    if (identity === null && credentialGiven) return void reply.code(401).send({ error: 'unauthorized' })
    const host = request.headers.host ?? ''
    forwardOn(request, reply, { identity, host, scheme: 'http', clientIp: request.socket.remoteAddress ?? '', operation: operationNameOf(request.method, request.url), bodySha256: '' })
  }
  // Callback-style, as the gateway's handler: a request with nothing to wait for makes no promise.
  app.all('/*', (request: FastifyRequest, reply: FastifyReply) => {
    const authorization = request.headers.authorization ?? ''
    const xWsse = request.headers['x-wsse']
    const waited = typeof xWsse === 'string' ? wsse(xWsse) : authorization.startsWith('OAuth ') ? oauth(request, authorization) : null
    if (waited !== null) return void waited.then((identity) => forward(request, reply, identity, true), (err: Error) => void reply.send(err))
    const synchronous = authorization.startsWith('Basic ') ? basic(authorization) : authorization.startsWith('Bearer ') ? bearer(authorization) : null
    forward(request, reply, synchronous, authorization !== '' || xWsse !== undefined)
  })
  app.addHook('onClose', async () => void redis.disconnect())
  return { app, redis }
}

async function main(): Promise<void> {
  const env = (name: string) => {
    const v = process.env[name]
    if (!v) throw new Error(`${name} is required`)
    return v
  }
  const { app } = await buildRequiredWorkProxy({
    upstream: env('REQUIRED_PROXY_UPSTREAM'),
    redisUrl: env('REDIS_URL'),
    secretKey: env('KIGO_SECRET_KEY'),
    fixture: JSON.parse(env('REQUIRED_PROXY_FIXTURE')) as RequiredWorkFixture,
  })
  await app.listen({ host: '127.0.0.1', port: Number(process.env.REQUIRED_PROXY_PORT ?? '0') })
  const stop = () => void app.close().then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: Error) => {
    console.error(`required-work proxy: ${err.message}`)
    process.exit(1)
  })
}
