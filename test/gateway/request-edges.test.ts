// The request edges (docs/security.md#request-edges), tried from the attacker's side over
// HTTP against a real gateway and a real core: credentials of a scheme kigo does not
// verify, a repeated Host, headers that would speak for the gateway, the framework's own
// error bodies, a keyword with a slash, signed requests replayed or unbound from their
// body, and the metrics endpoints' token. Between the gateway and the core sits a relay
// that records what the core is sent (and can break a connection once), so that what the
// gateway forwards is asserted as the core receives it.
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { identityKey, signIdentity } from '../../src/common/identity.js'
import { startCore, type RunningCore } from '../../src/core/server.js'
import { bodyOf, rawRequest, statusOf } from '../helpers/raw-http.js'
import { startStack, type Stack } from '../helpers/stack.js'

interface Seen { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer; status: number }

const metricsToken = randomBytes(24).toString('base64url')
let stack: Stack
let core: RunningCore
let relay: Server
/** What the core was sent through the relay, in order. */
const seen: Seen[] = []
/** 'reset-once': the next request is passed to the core, and its answer dropped with the connection. */
let relayMode: 'pass' | 'reset-once' = 'pass'
let frank: { api_password: string }
let client: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }
let entryId: string

function corePort(): number {
  return stack.config.core.port
}

/** Passes one request to the core as the relay received it; resolves to the core's answer. */
function toCore(method: string, url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const { connection: _c, ...rest } = headers
    const req = httpRequest({ host: '127.0.0.1', port: corePort(), method, path: url, headers: rest }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

beforeAll(async () => {
  relay = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const entry: Seen = { method: req.method!, url: req.url!, headers: req.headers, body, status: 0 }
      seen.push(entry)
      const breakIt = relayMode === 'reset-once'
      relayMode = 'pass'
      toCore(req.method!, req.url!, req.headers, body).then(
        (answer) => {
          entry.status = answer.status
          // The core ran it; the gateway never hears back (a connection lost on the way).
          if (breakIt) return void req.socket.destroy()
          const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, ...headers } = answer.headers
          res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) })
          res.end(answer.body)
        },
        () => req.socket.destroy(),
      )
    })
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  const relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`
  stack = await startStack({ coreUrl: relayUrl, overrides: { metricsToken } })
  core = await startCore(stack.config, { logger: false })
  frank = await stack.addUser('frank', 'Frank')
  client = await stack.addOAuthClient('frank', ['read_public', 'write_public'])
  const posted = await fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'keyword=a%2Fb&status=on+a+keyword+with+a+slash',
  })
  expect(posted.status).toBe(200)
  entryId = String(((await posted.json()) as { id: string | number }).id)
}, 120_000)

afterAll(async () => {
  await stack?.close()
  await core?.close()
  await new Promise((r) => relay?.close(r))
})

const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

function basic(user = 'frank', password = frank.api_password): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}

function gatewayHost(): string {
  return new URL(stack.url).host
}

/** `path` with valid OAuth protocol parameters in its query (RFC 5849 §3.5.3). */
function oauthQuery(method: string, path: string): string {
  const params: Record<string, string> = {
    oauth_consumer_key: client.consumerKey,
    oauth_token: client.token,
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_nonce: randomBytes(8).toString('hex'),
    oauth_version: '1.0',
  }
  const pairs = Object.entries(params).map(([k, v]) => `${enc(k)}=${enc(v)}`).sort()
  const base = [method, enc(`http://${gatewayHost()}${path}`), enc(pairs.join('&'))].join('&')
  const signature = createHmac('sha1', `${enc(client.consumerSecret)}&${enc(client.tokenSecret)}`).update(base).digest('base64')
  return `${path}?${pairs.join('&')}&oauth_signature=${enc(signature)}`
}

const raw = rawRequest

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code
}

describe('credentials of a scheme kigo does not verify', () => {
  for (const scheme of ['Bearer abc.def.ghi', 'Digest username="frank", realm="kigo", nonce="n", uri="/", response="r"', 'Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1', 'Kigo-Custom 1234']) {
    const name = scheme.split(' ')[0]!
    it(`valid OAuth parameters in the query with Authorization: ${name}: 400 multiple_credentials, nothing forwarded`, async () => {
      const before = seen.length
      const res = await fetch(stack.url + oauthQuery('GET', '/api/statuses/friends_timeline.json'), { headers: { authorization: scheme } })
      expect(res.status).toBe(400)
      expect(await errorCode(res)).toBe('multiple_credentials')
      expect(seen.length).toBe(before)
    })
  }

  it('the same query without the other header is accepted (the OAuth credential itself is good)', async () => {
    const res = await fetch(stack.url + oauthQuery('GET', '/api/statuses/friends_timeline.json'))
    expect(res.status).toBe(200)
  })

  it('X-WSSE beside Authorization: Bearer is 400 multiple_credentials too', async () => {
    const nonce = randomBytes(16)
    const created = new Date().toISOString()
    const digest = createHash('sha1').update(Buffer.concat([nonce, Buffer.from(created + frank.api_password)])).digest('base64')
    const res = await fetch(`${stack.url}/api/statuses/friends_timeline.json`, {
      headers: { 'x-wsse': `UsernameToken Username="frank", PasswordDigest="${digest}", Nonce="${nonce.toString('base64')}", Created="${created}"`, authorization: 'Bearer abc' },
    })
    expect(res.status).toBe(400)
    expect(await errorCode(res)).toBe('multiple_credentials')
  })

  it('alone, on a route that needs credentials: 401 with the challenges of the methods it accepts', async () => {
    const res = await fetch(`${stack.url}/api/statuses/friends_timeline.json`, { headers: { authorization: 'Digest username="frank", realm="kigo", nonce="n", uri="/", response="r"' } })
    expect(res.status).toBe(401)
    expect(await errorCode(res)).toBe('unsupported_credentials')
    expect(res.headers.get('www-authenticate')).toMatch(/OAuth realm="kigo"/)
  })

  it('alone, on an anonymous route: 401 as well (credentials that are present are verified)', async () => {
    const res = await fetch(`${stack.url}/api/statuses/public_timeline.xml`, { headers: { authorization: 'Negotiate YIIGhg' } })
    expect(res.status).toBe(401)
    expect(await res.text()).toContain('<code>unsupported_credentials</code>')
  })
})

describe('one Host (RFC 9112 §3.2)', () => {
  it('two Host headers at the gateway: 400 in format, nothing forwarded', async () => {
    const before = seen.length
    const res = await raw(Number(new URL(stack.url).port), `GET /api/statuses/public_timeline.xml HTTP/1.1\r\nHost: ${gatewayHost()}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(400)
    expect(bodyOf(res)).toContain('<code>bad_request</code>')
    expect(seen.length).toBe(before)
  })

  it('the same with the names spelled differently, and on a page', async () => {
    const res = await raw(Number(new URL(stack.url).port), `GET / HTTP/1.1\r\nhost: ${gatewayHost()}\r\nHOST: ${gatewayHost()}\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(400)
    expect(JSON.parse(bodyOf(res)).error.code).toBe('bad_request')
  })

  it('two Host headers at the core: 400 in format', async () => {
    const res = await raw(corePort(), `GET /api/statuses/public_timeline.json HTTP/1.1\r\nHost: ${gatewayHost()}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(400)
    expect(JSON.parse(bodyOf(res)).error.code).toBe('bad_request')
  })

  it('one Host is served as before', async () => {
    const res = await raw(Number(new URL(stack.url).port), `GET /api/statuses/public_timeline.json HTTP/1.1\r\nHost: ${gatewayHost()}\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(200)
  })
})

describe('headers that would speak for the gateway never reach the core', () => {
  it('Forwarded and every spelling of X-Kigo-* (underscores, any case) are removed; the identity is the signed one', async () => {
    const res = await raw(Number(new URL(stack.url).port), [
      `GET /api/statuses/friends_timeline.json HTTP/1.1`,
      `Host: ${gatewayHost()}`,
      `Authorization: ${basic()}`,
      'Forwarded: for=203.0.113.9;host=evil.example;proto=https',
      'X_Kigo_User: mallory',
      'x_kigo_auth_method: oauth',
      'X-Kigo_Scopes: write_private',
      'x_KIGO-consumer: stolen',
      'X-KIGO-USER-NAME: Mallory',
      'X-Kigoish: kept',
      'Connection: close',
      '', '',
    ].join('\r\n'))
    expect(statusOf(res)).toBe(200)
    const s = seen[seen.length - 1]!
    expect(s.status).toBe(200)
    expect(s.headers.forwarded).toBeUndefined()
    const kigoish = Object.keys(s.headers).filter((n) => /^x[-_]kigo[-_]/i.test(n))
    expect(kigoish.sort()).toEqual(['x-kigo-auth-method', 'x-kigo-consumer', 'x-kigo-identity-signature', 'x-kigo-operation', 'x-kigo-request-id', 'x-kigo-scopes', 'x-kigo-user', 'x-kigo-user-name'])
    expect(s.headers['x-kigo-user']).toBe('frank')
    expect(s.headers['x-kigo-auth-method']).toBe('basic')
    expect(s.headers['x-kigo-scopes']).toBe('')
    expect(s.headers['x-kigoish']).toBe('kept')
  })
})

describe("the framework's own failures are answered in kigo's format", () => {
  const methods = ['TRACE', 'PROPFIND', 'MKCOL', 'LOCK']
  for (const [name, port] of [['gateway', () => Number(new URL(stack.url).port)], ['core', () => corePort()]] as const) {
    for (const method of methods) {
      it(`${method} at the ${name}: 404 in the path's format, not Fastify's body`, async () => {
        const xml = await raw(port(), `${method} /api/statuses/public_timeline.xml HTTP/1.1\r\nHost: ${gatewayHost()}\r\nConnection: close\r\n\r\n`)
        expect(statusOf(xml)).toBe(404)
        expect(bodyOf(xml)).toContain('<code>not_found</code>')
        const json = await raw(port(), `${method} /some/page HTTP/1.1\r\nHost: ${gatewayHost()}\r\nConnection: close\r\n\r\n`)
        expect(statusOf(json)).toBe(404)
        expect(JSON.parse(bodyOf(json))).toEqual({ error: { status: 404, code: 'not_found', message: expect.any(String) } })
        expect(bodyOf(json)).not.toMatch(/Route|Not Found|statusCode/)
      })
    }

    it(`a URL the router cannot decode at the ${name}: 400 in format, the URL not echoed`, async () => {
      const target = '/api/statuses/show/%E0%A4%A<script>.xml'
      const res = await raw(port(), `GET ${target} HTTP/1.1\r\nHost: ${gatewayHost()}\r\nConnection: close\r\n\r\n`)
      expect(statusOf(res)).toBe(400)
      expect(bodyOf(res)).toMatch(/<code>(bad_encoding|bad_path)<\/code>/)
      expect(bodyOf(res)).not.toContain('<script>')
      expect(bodyOf(res)).not.toContain('FST_ERR')
      const page = await raw(port(), `GET /%zz<b>x HTTP/1.1\r\nHost: ${gatewayHost()}\r\nConnection: close\r\n\r\n`)
      expect(statusOf(page)).toBe(400)
      expect(JSON.parse(bodyOf(page)).error.code).toMatch(/^(bad_encoding|bad_path)$/)
      expect(bodyOf(page)).not.toContain('<b>')
    })
  }
})

describe("a head Node's parser refuses is answered in kigo's format too", () => {
  const ports = [['gateway', () => Number(new URL(stack.url).port)], ['core', () => corePort()], ['operator', () => Number(new URL(stack.adminUrl).port)]] as const
  for (const [name, port] of ports) {
    it(`an unknown method (FOO) and a malformed head at the ${name}: 400 in kigo's JSON, not Fastify's`, async () => {
      for (const head of [`FOO /api/statuses/public_timeline.xml HTTP/1.1\r\nHost: ${gatewayHost()}\r\n\r\n`, `GET / HTTP/1.1\r\nHost ${gatewayHost()}\r\n\r\n`]) {
        const res = await raw(port(), head)
        expect(statusOf(res), head).toBe(400)
        expect(JSON.parse(bodyOf(res)), head).toEqual({ error: { status: 400, code: 'bad_request', message: expect.any(String) } })
      }
    })
  }
})

describe('a keyword with a slash', () => {
  it('/keyword/a%2Fb is the page of the keyword a/b, through the gateway', async () => {
    for (const spelling of ['a%2Fb', 'a%2fb', '%61%2Fb']) {
      const res = await fetch(`${stack.url}/keyword/${spelling}`)
      expect(res.status, spelling).toBe(200)
      const html = await res.text()
      expect(html).toContain('<h1>a/b</h1>')
      expect(html).toContain('on a keyword with a slash')
    }
  })

  it('the encoded slash stays refused everywhere else, /api/ paths included', async () => {
    for (const path of ['/api/statuses%2Fshow/1.json', `/api/statuses/show%2F${entryId}.json`, '/api/keywords/show/a%2Fb.json', '/frank%2F', '/keyword/a%2Fb/c', `/frank/${entryId}%2F`]) {
      const res = await fetch(stack.url + path)
      expect(res.status, path).toBe(400)
      expect(await res.text(), path).toContain('bad_path')
    }
  })
})

describe('signed identities at the core', () => {
  it('a signed read is single-use: the request the gateway sent, replayed to the core, is 401', async () => {
    const res = await fetch(`${stack.url}/api/statuses/friends_timeline.json`, { headers: { authorization: basic() } })
    expect(res.status).toBe(200)
    const captured = seen[seen.length - 1]!
    expect(captured.headers['x-kigo-user']).toBe('frank')
    const again = await toCore('GET', captured.url, captured.headers, Buffer.alloc(0))
    expect(again.status).toBe(401)
    expect(JSON.parse(again.body.toString()).error.code).toBe('invalid_identity')
  })

  it("the gateway's own retry of a read signs afresh: the core ran the first, and still answers the second", async () => {
    const before = seen.length
    relayMode = 'reset-once'
    const res = await fetch(`${stack.url}/api/statuses/friends_timeline.json`, { headers: { authorization: basic() } })
    expect(res.status).toBe(200)
    const [first, second] = seen.slice(before)
    expect(first!.status).toBe(200)
    expect(second!.status).toBe(200)
    expect(second!.headers['x-kigo-request-id']).toBe(`${String(first!.headers['x-kigo-request-id'])}.1`)
    expect(second!.headers['x-kigo-identity-signature']).not.toBe(first!.headers['x-kigo-identity-signature'])
  })

  it('a signed form write without a body digest is refused, and stores nothing', async () => {
    const path = '/api/statuses/update.json'
    const host = gatewayHost()
    const identity = { user: 'frank', userName: 'Frank', authMethod: 'basic' as const, consumer: '', scopes: [] }
    const body = Buffer.from('status=unbound+body')
    const send = (bodySha256: string) => toCore('POST', path, {
      host,
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(body.length),
      ...signIdentity(identityKey(stack.config.secretKey), { method: 'POST', url: path, host, requestId: randomBytes(8).toString('hex'), operation: 'statuses/update', bodySha256 }, identity),
    }, body)
    const unbound = await send('')
    expect(unbound.status).toBe(401)
    expect(JSON.parse(unbound.body.toString()).error.code).toBe('invalid_identity')
    const timeline = await fetch(`${stack.url}/api/statuses/user_timeline/frank.json`)
    expect(await timeline.text()).not.toContain('unbound body')
    // The same write with its digest signed is run.
    const bound = await send(createHash('sha256').update(body).digest('base64url'))
    expect(bound.status).toBe(200)
  })

  it("a signed form without a body digest is refused on a form of \"the authenticated user\" too, whose admission waits for the body", async () => {
    const path = '/api/statuses/user_timeline.json'
    const host = gatewayHost()
    const identity = { user: 'frank', userName: 'Frank', authMethod: 'basic' as const, consumer: '', scopes: [] }
    const body = Buffer.from('id=frank')
    const res = await toCore('POST', path, {
      host,
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(body.length),
      ...signIdentity(identityKey(stack.config.secretKey), { method: 'POST', url: path, host, requestId: randomBytes(8).toString('hex'), operation: 'statuses/user_timeline/{id}', bodySha256: '' }, identity),
    }, body)
    expect(res.status).toBe(401)
    expect(JSON.parse(res.body.toString()).error.code).toBe('invalid_identity')
  })
})

describe('the metrics token', () => {
  for (const [name, url] of [['operator', () => `${stack.adminUrl}/metrics`], ['core', () => core.metricsUrl + '/metrics']] as const) {
    it(`the ${name} /metrics without the token, or with another, is 401 with a Bearer challenge`, async () => {
      for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${metricsToken.slice(0, -1)}x` }, { authorization: `Bearer ${stack.config.adminToken}` }, { authorization: `Basic ${metricsToken}` }]) {
        const res = await fetch(url(), { headers })
        expect(res.status, JSON.stringify(headers)).toBe(401)
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm=/)
        expect(await res.text()).not.toContain('# TYPE')
      }
    })

    it(`the ${name} /metrics with the token answers the metrics`, async () => {
      const res = await fetch(url(), { headers: { authorization: `bearer ${metricsToken}` } })
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('# TYPE')
    })
  }
})
