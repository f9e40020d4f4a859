// The ways a request's meaning could change after the gateway looked at it, and abuse
// that would cost the gateway memory or time: each tried through HTTP against a running
// gateway, in front of a recording upstream standing in for the core (what the core
// receives is what is asserted).
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer, get, type IncomingHttpHeaders, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'

interface Seen { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer }

let upstream: Server
let upstreamUrl: string
const seen: Seen[] = []
let stack: Stack
let apiPassword: string
let client: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) })
      res.setHeader('content-type', 'application/json')
      res.end('{"ok":true}')
    })
  })
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`
  stack = await startStack({
    coreUrl: upstreamUrl,
    overrides: {
      trustedProxies: ['127.0.0.2'],
      gateway: { http: { requestTimeoutMs: 1500, headersTimeoutMs: 1000, idleTimeoutMs: 5000, keepAliveTimeoutMs: 5000, maxConnections: 50, operatorMaxConnections: 20 } },
      auth: { replayPerClientMax: 3 },
    },
  })
  apiPassword = (await stack.addUser('frank', 'Frank')).api_password
  await stack.addUser('grace', 'Grace')
  client = await stack.addOAuthClient('frank', ['write_public'])
}, 120_000)

afterAll(async () => {
  await stack?.close()
  await new Promise((r) => upstream?.close(r))
})

const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

function gatewayPort(): number {
  return Number(new URL(stack.url).port)
}

/** A raw HTTP/1.1 exchange: the request exactly as written, the response as read. */
function raw(text: string | Buffer, opts: { source?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: gatewayPort(), ...(opts.source ? { localAddress: opts.source } : {}) })
    let out = ''
    socket.setEncoding('latin1')
    socket.on('data', (d: string) => {
      out += d
      if (/\r\n\r\n/.test(out) && /content-length: *(\d+)/i.test(out)) {
        const len = Number(/content-length: *(\d+)/i.exec(out)![1])
        if (Buffer.byteLength(out.slice(out.indexOf('\r\n\r\n') + 4), 'latin1') >= len) socket.end()
      }
    })
    socket.on('end', () => resolve(out))
    socket.on('close', () => resolve(out))
    socket.on('error', reject)
    socket.write(text)
  })
}

const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0)
const bodyOf = (response: string) => response.slice(response.indexOf('\r\n\r\n') + 4)

function basic(user = 'frank', password = apiPassword): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
}

function wsse(user: string, password: string): string {
  const nonce = randomBytes(16).toString('base64')
  const created = new Date().toISOString()
  const digest = createHash('sha1').update(Buffer.concat([Buffer.from(nonce, 'base64'), Buffer.from(created + password)])).digest('base64')
  return `UsernameToken Username="${user}", PasswordDigest="${digest}", Nonce="${nonce}", Created="${created}"`
}

/** An OAuth header for `method` `path` on the domestic host; `extra` protocol parameters are signed too. */
function oauth(method: string, path: string, opts: { form?: string; extra?: Record<string, string>; nonce?: string; nameSpelling?: (name: string) => string } = {}): string {
  const params: Record<string, string> = {
    oauth_consumer_key: client.consumerKey,
    oauth_token: client.token,
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_nonce: opts.nonce ?? randomBytes(8).toString('hex'),
    ...opts.extra,
  }
  const q = path.indexOf('?')
  const query = q === -1 ? [] : [...new URLSearchParams(path.slice(q + 1))]
  const pairs = [...Object.entries(params), ...query, ...[...new URLSearchParams(opts.form ?? '')]].map(([k, v]) => `${enc(k)}=${enc(v)}`).sort()
  const base = [method, enc(`http://${new URL(stack.url).host}${q === -1 ? path : path.slice(0, q)}`), enc(pairs.join('&'))].join('&')
  const signature = createHmac('sha1', `${enc(client.consumerSecret)}&${enc(client.tokenSecret)}`).update(base).digest('base64')
  const spell = opts.nameSpelling ?? ((n: string) => n)
  return 'OAuth ' + Object.entries({ ...params, oauth_signature: signature }).map(([k, v]) => `${spell(k)}="${enc(v)}"`).join(', ')
}

describe('one credential, read once', () => {
  it('two Authorization headers: 400 multiple_credentials, nothing forwarded', async () => {
    const before = seen.length
    const res = await raw(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nAuthorization: ${basic()}\r\nAuthorization: ${basic('grace', 'wrong')}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 6\r\nConnection: close\r\n\r\nstatus`)
    expect(statusOf(res)).toBe(400)
    expect(JSON.parse(bodyOf(res)).error.code).toBe('multiple_credentials')
    expect(seen.length).toBe(before)
  })

  it('two X-WSSE headers: 400 multiple_credentials', async () => {
    const res = await raw(`GET /api/statuses/show/1.xml HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nX-WSSE: ${wsse('frank', apiPassword)}\r\nX-WSSE: ${wsse('grace', 'x')}\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(400)
    expect(bodyOf(res)).toContain('<code>multiple_credentials</code>')
  })

  it('an absolute-form target is a 400 in format, and its nonce is still unused afterwards', async () => {
    const host = new URL(stack.url).host
    const nonce = randomBytes(8).toString('hex')
    const header = oauth('GET', '/api/statuses/show/1.xml', { nonce })
    const res = await raw(`GET http://${host}/api/statuses/show/1.xml HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${header}\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(400)
    expect(bodyOf(res)).toContain('<code>bad_path</code>')
    const again = await fetch(`${stack.url}/api/statuses/show/1.xml`, { headers: { authorization: header } })
    expect(again.status).toBe(200)
  })
})

describe('oauth_body_hash, however its name is spelled', () => {
  const body = Buffer.from('{"status":"exactly these bytes"}')
  const hash = createHash('sha1').update(body).digest('base64')

  it('a body that matches its hash is forwarded byte for byte, bound into the signed identity', async () => {
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: oauth('POST', '/api/statuses/update.json', { extra: { oauth_body_hash: hash } }), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    const got = seen[seen.length - 1]!
    expect(got.body.equals(body)).toBe(true)
    // The client's SHA-1 oauth_body_hash, which the core checks again before acting.
    expect(got.headers['x-kigo-body-sha256']).toBe(`sha1:${createHash('sha1').update(body).digest('base64url')}`)
  })

  it('oauth%5Fbody_hash in the header is still checked: another body is 401 and not forwarded', async () => {
    const before = seen.length
    const header = oauth('POST', '/api/statuses/update.json', { extra: { oauth_body_hash: hash }, nameSpelling: (n) => n.replace('oauth_body', 'oauth%5Fbody') })
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: header, 'content-type': 'application/json' }, body: '{"status":"other bytes"}' })
    expect(res.status).toBe(401)
    expect(seen.length).toBe(before)
  })

  it('in the query, percent-encoded: the same', async () => {
    const before = seen.length
    const path = `/api/statuses/update.json?oauth%5Fbody_hash=${enc(hash)}`
    const header = oauth('POST', path)
    const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: header, 'content-type': 'application/json' }, body: '{"status":"other bytes"}' })
    expect(res.status).toBe(400) // parameters from two places
    expect(seen.length).toBe(before)
  })

  it('a body is not buffered for an unknown consumer: the answer comes before the body is sent', async () => {
    const host = new URL(stack.url).host
    const header = `OAuth oauth_consumer_key="nobody", oauth_token="none", oauth_signature_method="HMAC-SHA1", oauth_timestamp="${Math.floor(Date.now() / 1000)}", oauth_nonce="n1", oauth_body_hash="${enc(hash)}", oauth_signature="x"`
    // Announces 10 MB and sends 10 bytes: an answer can only come without reading the body.
    const res = await raw(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${header}\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000\r\n\r\n0123456789`)
    expect(statusOf(res)).toBe(401)
  })
})

describe('what reaches the core', () => {
  it("kigo's own cookies are removed; others pass", async () => {
    const res = await fetch(`${stack.url}/alice/`, { headers: { cookie: 'kigo_session=s3cret; theme=dark; kigo_admin_session=adm1n; lang=ja' } })
    expect(res.status).toBe(200)
    expect(seen[seen.length - 1]!.headers.cookie).toBe('theme=dark; lang=ja')
  })

  it('outside the route table, a POST is forwarded without credentials or identity', async () => {
    const res = await fetch(`${stack.url}/alice/`, { method: 'POST', headers: { authorization: basic(), 'content-type': 'text/plain' }, body: 'x' })
    expect(res.status).toBe(200)
    const got = seen[seen.length - 1]!
    expect(got.headers.authorization).toBeUndefined()
    expect(got.headers['x-kigo-user']).toBeUndefined()
    expect(got.headers['x-kigo-identity-signature']).toBeUndefined()
  })

  it('an unknown /api/ path with credentials is 404 at the gateway', async () => {
    const before = seen.length
    const res = await fetch(`${stack.url}/api/statuses/frobnicate.xml`, { method: 'POST', headers: { authorization: basic() } })
    expect(res.status).toBe(404)
    expect(await res.text()).toContain('<status>404</status>')
    expect(seen.length).toBe(before)
  })

  it('a wrong method on a known path is 405 with Allow at the gateway, in format', async () => {
    const res = await fetch(`${stack.url}/api/statuses/update.xml`, { method: 'GET' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    expect(await res.text()).toContain('<code>method_not_allowed</code>')
  })

  it('a trusted proxy: the right-most X-Forwarded-Host and -Proto count, not what the client put before them', async () => {
    const port = gatewayPort()
    const res = await raw(`GET /alice/ HTTP/1.1\r\nHost: 10.0.0.1\r\nX-Forwarded-Host: evil.example, localhost:${port}\r\nX-Forwarded-Proto: https, http\r\nConnection: close\r\n\r\n`, { source: '127.0.0.2' })
    expect(statusOf(res)).toBe(200)
    const got = seen[seen.length - 1]!
    expect(got.headers.host).toBe(`localhost:${port}`)
    expect(got.headers['x-forwarded-proto']).toBe('http')
  })
})

describe('the provider answers for the two deployments only', () => {
  it.each(['/oauth/initiate', '/applications/my.json', '/account/login'])('%s with another Host: 400 unknown_deployment', async (path) => {
    const res = await raw(`GET ${path} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)
    expect(statusOf(res)).toBe(400)
    expect(bodyOf(res)).toMatch(/unknown_deployment|not a deployment/)
  })
})

describe('abuse that would cost memory or time', () => {
  it('a body trickled past the request deadline: 408 and the connection closes', async () => {
    const host = new URL(stack.url).host
    const started = Date.now()
    const res = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: gatewayPort() })
      let out = ''
      socket.setEncoding('latin1')
      socket.on('data', (d: string) => (out += d))
      socket.on('close', () => {
        clearInterval(timer)
        resolve(out)
      })
      socket.on('error', () => undefined)
      socket.write(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${basic()}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n`)
      const timer = setInterval(() => socket.write('a'), 200)
      setTimeout(() => reject(new Error('still open after 15 s')), 15_000).unref()
    })
    expect(Date.now() - started).toBeLessThan(6000)
    expect(statusOf(res)).toBe(408)
  })

  it('the operator port has the same deadlines: headers never finished, the connection closes', async () => {
    const started = Date.now()
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: Number(new URL(stack.adminUrl).port) })
      socket.on('close', () => resolve())
      socket.on('error', () => undefined)
      socket.resume()
      socket.write(`GET /admin/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.config.adminToken}\r\n`)
      setTimeout(() => reject(new Error('still open after 15 s')), 15_000).unref()
    })
    expect(Date.now() - started).toBeLessThan(6000)
  })

  it('headers never finished: the connection closes after the headers deadline', async () => {
    const started = Date.now()
    await new Promise<void>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: gatewayPort() })
      socket.on('close', () => resolve())
      socket.on('error', () => undefined)
      socket.resume()
      socket.write('GET /api/statuses/show/1.json HTTP/1.1\r\nHost: x\r\n')
    })
    expect(Date.now() - started).toBeLessThan(6000)
  })

  /**
   * Holds `count` idle connections to `url`'s port that the server accepted: one it closed
   * at once (the port was full of other clients' kept-alive connections) is replaced.
   */
  async function hold(url: string, count: number): Promise<Array<ReturnType<typeof connect>>> {
    const open = () => new Promise<ReturnType<typeof connect>>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: Number(new URL(url).port) }, () => resolve(s))
      s.on('error', () => undefined)
      // Read, so that a close by the server is seen (and the socket ends with it).
      s.resume()
    })
    let held: Array<ReturnType<typeof connect>> = []
    for (let i = 0; i < 20 && held.length < count; i++) {
      held.push(...(await Promise.all(Array.from({ length: count - held.length }, open))))
      await new Promise((r) => setTimeout(r, 100))
      held = held.filter((s) => !s.destroyed && s.readyState === 'open')
    }
    return held
  }
  /** A GET on a connection of its own (no pooled one): its status, or 'closed' when refused unanswered. */
  const probe = (url: string) =>
    new Promise<number | 'closed'>((resolve) => {
      get(url, { agent: false }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode!))
      }).on('error', () => resolve('closed'))
    })

  /** Past `cap` open connections a request is closed unanswered, and served once they go. */
  async function capHolds(url: string, cap: number): Promise<void> {
    const sockets = await hold(url, cap)
    try {
      expect(await probe(url)).toBe('closed')
    } finally {
      for (const s of sockets) s.destroy()
    }
    await new Promise((r) => setTimeout(r, 200))
    expect(typeof (await probe(url))).toBe('number')
  }

  it('past the connection cap new connections are closed, and served again once others go', async () => {
    await capHolds(`${stack.url}/healthz`, 50)
  })

  it('the operator port has its own cap: a flood there is refused, and the public port still serves', async () => {
    const sockets = await hold(stack.adminUrl, 20)
    try {
      expect(await probe(`${stack.adminUrl}/metrics`)).toBe('closed')
      expect(await probe(`${stack.url}/healthz`)).toBe(200)
    } finally {
      for (const s of sockets) s.destroy()
    }
    await capHolds(`${stack.adminUrl}/metrics`, 20)
  })

  it('one WSSE user cannot fill the in-process nonce cache for others: past its share it alone gets 429', async () => {
    const graceKey = (await stack.admin<{ api_password: string }>('POST', '/admin/users/grace/reset-api-password')).body.api_password
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${stack.url}/api/statuses/show/1.json`, { headers: { 'x-wsse': wsse('frank', apiPassword) } })
      statuses.push(r.status)
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200])
    expect(statuses.slice(3)).toEqual([429, 429])
    const other = await fetch(`${stack.url}/api/statuses/show/1.json`, { headers: { 'x-wsse': wsse('grace', graceKey) } })
    expect(other.status).toBe(200)
  })
})

