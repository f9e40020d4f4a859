// Forwarding (docs/gateway.md#forwarding) against a real upstream on port 0 that reports what it received:
// request line, query and body unchanged, headers cleaned, identity signed, bodies
// streamed, and the core's absence answered in format within the timeout.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { XMLParser } from 'fast-xml-parser'
import { request } from 'undici'
import { identityKey, verifyIdentity } from '../../src/common/identity.js'
import { freePort, startStack, type Stack } from '../helpers/stack.js'

interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
  /** Milliseconds from the request's arrival to its first body byte. */
  firstByteAt: number | null
}

let upstream: Server
let upstreamPort: number
let seen: Seen[] = []
let mode: 'echo' | 'slow' | 'reset-once' | 'hop' | 'large' | 'broken' | 'not-modified' | 'flood' | 'refuse-early' = 'echo'
/** 'large': the core sends the rest of its answer once this resolves. */
let releaseLarge: Promise<void> = Promise.resolve()
/** 'flood': how many bytes the core managed to write before its connection pushed back. */
let flooded = 0
let stack: Stack
let alice: { api_password: string }

beforeAll(async () => {
  upstreamPort = await freePort()
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = []
    const entry: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.alloc(0), firstByteAt: null }
    seen.push(entry)
    const arrived = Date.now()
    if (mode === 'refuse-early') {
      // Refuses an upload at once, before reading it (a core's 413), as the core may.
      res.writeHead(413, { 'content-type': 'application/json' })
      res.end('{"error":"too large"}')
      return
    }
    req.on('data', (c: Buffer) => {
      entry.firstByteAt ??= Date.now() - arrived
      chunks.push(c)
    })
    req.on('end', () => {
      entry.body = Buffer.concat(chunks)
      if (req.url === '/healthz') {
        res.end('{}')
        return
      }
      const reply = () => {
        const body = JSON.stringify({ ok: true })
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length), connection: 'keep-alive', 'x-upstream': 'yes' })
        res.end(body)
      }
      if (mode === 'slow') setTimeout(reply, 3000)
      else if (mode === 'reset-once') {
        // The connection fails before any answer (a core restarting), once.
        mode = 'echo'
        req.socket.destroy()
      } else if (mode === 'hop') {
        // The core names a header of its own as hop-by-hop (RFC 9110 §7.6.1).
        res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-core-hop', 'x-core-hop': 'this hop only', 'x-upstream': 'yes' })
        res.end('{}')
      } else if (mode === 'large') {
        // Larger than the gateway reads whole, and says so: it must stream (the flood below has no length).
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(200 * 1024) })
        res.write(Buffer.alloc(100 * 1024, 'a'))
        void releaseLarge.then(() => res.end(Buffer.alloc(100 * 1024, 'b')))
      } else if (mode === 'broken') {
        // Announces 100 bytes, sends 10, and goes away.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
        res.write('{"partial"')
        setTimeout(() => res.socket?.destroy(), 50)
      } else if (mode === 'not-modified') {
        res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=60' })
        res.end()
      } else if (mode === 'flood') {
        // Writes until its connection to the gateway pushes back, then stops.
        flooded = 0
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        const chunk = Buffer.alloc(256 * 1024)
        const more = () => {
          while (flooded < 256 * 1024 * 1024) {
            flooded += chunk.length
            if (!res.write(chunk)) return void res.once('drain', more)
          }
          res.end()
        }
        more()
      } else reply()
    })
  })
  await new Promise<void>((resolve) => upstream.listen(upstreamPort, '127.0.0.1', resolve))
  stack = await startStack({ coreUrl: `http://127.0.0.1:${upstreamPort}`, overrides: { gateway: { host: '127.0.0.1', coreTimeoutMs: 1000 } } })
  alice = await stack.addUser('alice', 'Alice')
})

afterAll(async () => {
  await stack?.close()
  await new Promise((resolve) => upstream?.close(resolve))
})

function last(): Seen {
  return seen[seen.length - 1]!
}

/** Runs `test` with the upstream answering as `answering` says, then back to echoing. */
async function withMode(answering: typeof mode, test: () => Promise<void>): Promise<void> {
  mode = answering
  try {
    await test()
  } finally {
    mode = 'echo'
  }
}

/** A GET whose request line is `path` exactly as given (node:http sends it as is; a WHATWG URL would re-encode it first). */
function raw(path: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const { port, host } = new URL(stack.url)
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('forwarding', () => {
  it('passes the request line, query and body through byte for byte', async () => {
    seen = []
    const query = '?b=%20x+y&a=%E3%81%82&a=2&empty=&flag&pct=%2541'
    const body = 'status=caf%C3%A9+%2B+more&keyword=%E6%97%A5&status2=a%26b'
    const res = await fetch(`${stack.url}/api/statuses/update.json${query}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
        authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64'),
      },
      body,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-upstream')).toBe('yes')
    const s = last()
    expect(s.method).toBe('POST')
    expect(s.url).toBe(`/api/statuses/update.json${query}`)
    expect(s.body.toString()).toBe(body)
    expect(s.headers['content-type']).toBe('application/x-www-form-urlencoded; charset=UTF-8')
    expect(s.headers.host).toBe(new URL(stack.url).host)
  })

  it('passes odd and malformed query strings through untouched', async () => {
    for (const query of ['?callback=%ZZ', "?body_formats=%FF&x='y'", '?a=%E3%81&b=`c`&d=<e>']) {
      seen = []
      expect(await raw(`/api/statuses/show/1.json${query}`)).toBe(200)
      expect(last().url).toBe(`/api/statuses/show/1.json${query}`)
    }
  })

  it('passes the path through as the request line spells it, characters a URL parser would re-encode included', async () => {
    // A WHATWG URL sends {, }, ", <, > and ` percent-encoded: the core would read another path than the gateway read.
    for (const path of ['/keyword/a{b}c', '/keyword/"q"<x>`y`', '/keyword/a|b^c', '/keyword/%7Bb%7D?x={y}']) {
      seen = []
      expect(await raw(path)).toBe(200)
      expect(last().url).toBe(path)
    }
  })

  it("never passes a GET's body on: the core reads neither it nor a request hidden in it", async () => {
    seen = []
    const { port, host } = new URL(stack.url)
    const smuggled = `GET /api/statuses/destroy/9.json HTTP/1.1\r\nHost: ${host}\r\n\r\n`
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: Number(port) })
      let out = ''
      socket.setEncoding('latin1')
      socket.on('data', (d: string) => {
        out += d
        // Answers end where the next status line starts, not always at a line's start.
        if ((out.match(/HTTP\/1\.1 \d{3} /g) ?? []).length === 2) socket.end()
      })
      socket.on('close', () => resolve(out))
      socket.on('error', reject)
      // A body on a GET, then a second request on the same connection.
      socket.write(`GET /api/statuses/show/1.json HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}`)
      socket.write(`GET /api/statuses/show/2.json HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
    })
    expect(answers.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200'])
    expect(seen.map((s) => [s.method, s.url, s.body.length, s.headers['content-length']])).toEqual([
      ['GET', '/api/statuses/show/1.json', 0, undefined],
      ['GET', '/api/statuses/show/2.json', 0, undefined],
    ])
  })

  it('answers a path that climbs out of its root with 400, not forwarding it', async () => {
    seen = []
    const res = await request(`${stack.url}/api/statuses/show/..%2F..%2Fadmin.json`)
    expect(res.statusCode).toBe(400)
    expect((await res.body.json() as { error: { status: number } }).error.status).toBe(400)
    expect(seen).toHaveLength(0)
  })

  it("passes no caller's trace context on, also when the gateway traces nothing: a core that traces samples by its own decision", async () => {
    seen = []
    const res = await fetch(`${stack.url}/api/statuses/public_timeline.json`, {
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'caller=chosen', 'x-other': 'kept' },
    })
    await res.arrayBuffer()
    const s = last()
    expect(s.headers.traceparent).toBeUndefined()
    expect(s.headers.tracestate).toBeUndefined()
    expect(s.headers['x-other']).toBe('kept')
  })

  it('removes credentials and inbound X-Kigo-* headers, and adds a signed identity', async () => {
    seen = []
    await fetch(`${stack.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64'),
        'x-kigo-user': 'mallory',
        'x-kigo-scopes': 'write_private',
        'x-kigo-anything': 'x',
      },
      body: 'status=hi',
    })
    const s = last()
    expect(s.headers.authorization).toBeUndefined()
    expect(s.headers['x-kigo-anything']).toBeUndefined()
    expect(s.headers['x-kigo-user']).toBe('alice')
    expect(s.headers['x-kigo-auth-method']).toBe('basic')
    expect(s.headers['x-kigo-scopes']).toBe('')
    expect(s.headers['x-forwarded-proto']).toBe('http')
    expect(s.headers['x-forwarded-host']).toBe(new URL(stack.url).host)
    expect(s.headers['x-forwarded-for']).toBe('127.0.0.1')
    const check = verifyIdentity(identityKey(stack.config.secretKey), s.headers, { method: s.method, url: s.url, host: s.headers.host! }, 60)
    expect(check).toMatchObject({ ok: true, identity: { user: 'alice', userName: 'Alice', authMethod: 'basic' } })
    // The signature binds the request: another path does not verify.
    expect(verifyIdentity(identityKey(stack.config.secretKey), s.headers, { method: s.method, url: '/api/statuses/destroy/1.json', host: s.headers.host! }, 60).ok).toBe(false)
  })

  it('forwards anonymous requests with a request id and no identity', async () => {
    seen = []
    await fetch(`${stack.url}/api/statuses/show/1.json`, { headers: { 'x-kigo-user': 'alice', 'x-kigo-identity-signature': 'forged' } })
    const s = last()
    expect(s.headers['x-kigo-user']).toBeUndefined()
    expect(s.headers['x-kigo-identity-signature']).toBeUndefined()
    expect(s.headers['x-kigo-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    const check = verifyIdentity(identityKey(stack.config.secretKey), s.headers, { method: 'GET', url: s.url, host: s.headers.host! }, 60)
    expect(check).toMatchObject({ ok: true, identity: null, signed: false })
  })

  it('streams a body the client is still sending (not buffered whole)', async () => {
    seen = []
    const url = new URL(`${stack.url}/api/statuses/update.json`)
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST',
        headers: {
          host: url.host,
          'content-type': 'multipart/form-data; boundary=XyZ',
          'transfer-encoding': 'chunked',
          authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64'),
        },
      }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      req.on('error', reject)
      req.write('--XyZ\r\nContent-Disposition: form-data; name="status"\r\n\r\nfirst part\r\n')
      // The rest follows only once the upstream has seen the first bytes.
      const wait = setInterval(() => {
        if (seen.length > 0 && seen[0]!.firstByteAt !== null) {
          clearInterval(wait)
          req.end('--XyZ--\r\n')
        }
      }, 20)
      setTimeout(() => { clearInterval(wait); req.end('--XyZ--\r\n') }, 5000)
    })
    expect(status).toBe(200)
    expect(seen[0]!.body.toString()).toContain('first part')
    expect(seen[0]!.body.toString()).toMatch(/--XyZ--\r\n$/)
  })

  it('meets an Expect: 100-continue itself and forwards the request without it (clients send it before uploads)', async () => {
    for (const method of ['GET', 'POST']) {
      seen = []
      const { port, host } = new URL(stack.url)
      const body = 'status=after+the+100'
      const answer = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false
        const req = httpRequest({
          host: '127.0.0.1', port, method,
          path: method === 'GET' ? '/api/statuses/show/1.json' : '/api/statuses/update.json',
          headers: {
            host, expect: '100-continue',
            ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64') } : {}),
          },
        }, (res) => {
          res.resume()
          resolve({ status: res.statusCode!, continued })
        })
        // The body goes only once the gateway has said 100 Continue.
        req.on('continue', () => {
          continued = true
          if (method === 'POST') req.end(body)
        })
        req.on('error', reject)
        if (method === 'GET') req.end()
      })
      expect(answer).toEqual({ status: 200, continued: true })
      expect(last().headers.expect).toBeUndefined()
      expect(last().body.toString()).toBe(method === 'POST' ? body : '')
    }
  })

  it('drops hop-by-hop headers in both directions', async () => {
    seen = []
    const res = await fetch(`${stack.url}/api/statuses/show/1.json`, { headers: { 'x-custom': 'kept', te: 'trailers' } })
    expect(last().headers['x-custom']).toBe('kept')
    expect(last().headers.te).toBeUndefined()
    expect(res.headers.get('x-upstream')).toBe('yes')
  })

  it('drops the headers a Connection header names, in both directions, and keeps its own', async () => {
    seen = []
    const { port, host } = new URL(stack.url)
    const answer = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      mode = 'hop'
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/api/statuses/show/1.json', headers: { host, connection: 'keep-alive, X-Client-Hop, x-forwarded-for, X-Kigo-Request-Id', 'x-client-hop': 'mine', 'x-custom': 'kept' } },
        (res) => {
          res.resume()
          resolve(res.headers)
        },
      )
      req.on('error', reject)
      req.end()
    }).finally(() => (mode = 'echo'))
    const s = last()
    expect(s.headers['x-client-hop']).toBeUndefined()
    expect(s.headers['x-custom']).toBe('kept')
    // What the gateway sets itself cannot be taken away by naming it.
    expect(s.headers['x-forwarded-for']).toBe('127.0.0.1')
    expect(s.headers['x-kigo-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer['x-core-hop']).toBeUndefined()
    expect(answer['x-upstream']).toBe('yes')
  })

  it('sends a read once more when the connection to the core fails before any answer', async () => {
    seen = []
    mode = 'reset-once'
    const res = await fetch(`${stack.url}/api/statuses/show/1.json`)
    expect(res.status).toBe(200)
    expect(seen.map((s) => s.url)).toEqual(['/api/statuses/show/1.json', '/api/statuses/show/1.json'])
  })

  it('never sends a write twice: a connection that fails before any answer is 502', async () => {
    seen = []
    mode = 'reset-once'
    const res = await fetch(`${stack.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64') },
      body: 'status=once',
    })
    expect(res.status).toBe(502)
    expect(((await res.json()) as { error: { status: number } }).error.status).toBe(502)
    expect(seen.map((s) => s.body.toString())).toEqual(['status=once'])
    mode = 'echo'
  })

  it('answers 504 in format when the core is too slow', async () => {
    mode = 'slow'
    try {
      const started = Date.now()
      const res = await fetch(`${stack.url}/api/statuses/show/1.xml`)
      expect(res.status).toBe(504)
      expect(Date.now() - started).toBeLessThan(2900)
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/)
      expect(new XMLParser().parse(await res.text()).error.code).toBe('gateway_timeout')
    } finally {
      mode = 'echo'
    }
  })
})

describe("the core's answers", () => {
  it('streams an answer whose length is over the limit: the client has its first part before the core has sent the rest', async () => {
    let release!: () => void
    releaseLarge = new Promise((resolve) => (release = resolve))
    mode = 'large'
    try {
      const res = await request(`${stack.url}/api/statuses/show/1.json`)
      expect(res.statusCode).toBe(200)
      const received: Buffer[] = []
      let size = 0
      for await (const chunk of res.body) {
        received.push(chunk as Buffer)
        size += (chunk as Buffer).length
        // The core holds back its second half until the client has all of the first.
        if (size === 100 * 1024) release()
      }
      const body = Buffer.concat(received)
      expect(body.length).toBe(200 * 1024)
      expect(body.subarray(0, 100 * 1024).every((b) => b === 0x61)).toBe(true)
      expect(body.subarray(100 * 1024).every((b) => b === 0x62)).toBe(true)
    } finally {
      release?.()
      mode = 'echo'
    }
  })

  it('reads no faster than the client does: a client that stops reading stops the core', async () => {
    await withMode('flood', async () => {
      const res = await request(`${stack.url}/api/statuses/show/1.json`)
      expect(res.statusCode).toBe(200)
      // The client reads nothing for a second: what the core could write is what the
      // sockets and the gateway's stream buffer between them hold, not the 256 MiB it offers.
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(flooded).toBeGreaterThan(0)
      expect(flooded).toBeLessThan(32 * 1024 * 1024)
      const before = flooded
      let read = 0
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length
        if (read > before + 8 * 1024 * 1024) break
      }
      // Reading again lets the core go on.
      expect(flooded).toBeGreaterThan(before)
    })
  })

  it('closes the client connection after an answer the core gave before the upload was read', async () => {
    await withMode('refuse-early', async () => {
      const url = new URL(`${stack.url}/api/statuses/update.json`)
      const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST',
          headers: { host: url.host, 'content-type': 'multipart/form-data; boundary=XyZ', 'transfer-encoding': 'chunked', authorization: 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64') },
        }, (res) => {
          res.resume()
          resolve({ status: res.statusCode!, connection: res.headers.connection })
          req.destroy()
        })
        req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)))
        // The upload's first part only: the rest never comes while the answer is read.
        req.write('--XyZ\r\nContent-Disposition: form-data; name="status"\r\n\r\nfirst part\r\n')
      })
      // The rest of the upload is still on the wire: the connection cannot carry another request.
      expect(answer).toEqual({ status: 413, connection: 'close' })
    })
  })

  it('answers 502 in format when the core breaks off a small answer before the client was sent anything', async () => {
    await withMode('broken', async () => {
      const res = await fetch(`${stack.url}/api/statuses/show/1.xml`)
      expect(res.status).toBe(502)
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/)
      expect(new XMLParser().parse(await res.text()).error.status).toBe(502)
    })
  })

  it('passes a 304 and a HEAD answer on with the headers the core gave, and no length of its own', async () => {
    await withMode('not-modified', async () => {
      const res = await request(`${stack.url}/api/statuses/show/1.json`, { headers: { 'if-none-match': '"v1"' } })
      expect(res.statusCode).toBe(304)
      expect(res.headers.etag).toBe('"v1"')
      expect(res.headers['cache-control']).toBe('max-age=60')
      expect(res.headers['content-length']).toBeUndefined()
      expect((await res.body.arrayBuffer()).byteLength).toBe(0)
    })
    const head = await request(`${stack.url}/api/statuses/show/1.json`, { method: 'HEAD' })
    expect(head.statusCode).toBe(200)
    expect(head.headers['x-upstream']).toBe('yes')
    expect(head.headers['content-length']).toBe(String(JSON.stringify({ ok: true }).length))
    expect((await head.body.arrayBuffer()).byteLength).toBe(0)
  })
})

describe('the core being away', () => {
  it('answers 503 with Retry-After in format, without detail', async () => {
    const port = await freePort()
    const away = await startStack({ coreUrl: `http://127.0.0.1:${port}` })
    try {
      const res = await fetch(`${away.url}/api/statuses/show/1.json`)
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toMatch(/^[0-9]+$/)
      const body = await res.json()
      expect(body.error.status).toBe(503)
      expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stack/)
      const ready = await fetch(`${away.url}/readyz`)
      expect(ready.status).toBe(503)
    } finally {
      await away.close()
    }
  })
})
