// Verify before you read (docs/security.md#bodies-and-uploads): no body is read before a
// credential is proven, except a form (whose parameters are signed), which is bounded. A
// body under oauth_body_hash is checked as it streams, and one whose hash does not match
// never reaches the core whole. Through HTTP against a running gateway, in front of a
// recording upstream standing in for the core (what the core receives is asserted).
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { percentEncode } from '../helpers/oauth-header.js'

interface Seen { url: string; headers: IncomingHttpHeaders; body: Buffer }

let upstream: Server
/** Requests the upstream received whole. */
const seen: Seen[] = []
/** Requests the upstream started receiving (whole or not). */
let started = 0
let stack: Stack
let apiPassword: string
let client: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }
const formLimit = 16 * 1024

beforeAll(async () => {
  upstream = createServer((req, res) => {
    started++
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks) })
      res.setHeader('content-type', 'application/json')
      res.end('{"ok":true}')
    })
  })
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  stack = await startStack({
    coreUrl: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
    overrides: { gateway: { formBodyLimitBytes: formLimit } },
  })
  apiPassword = (await stack.addUser('frank', 'Frank')).api_password
  client = await stack.addOAuthClient('frank', ['write_public'])
}, 120_000)

afterAll(async () => {
  await stack?.close()
  await new Promise((r) => upstream?.close(r))
})

const host = () => new URL(stack.url).host
const port = () => Number(new URL(stack.url).port)

/** An OAuth header for POST `path`, signed with HMAC-SHA1 or -SHA256; `form` pairs are signed too. */
function oauth(path: string, opts: { bodyHash?: string; method?: 'HMAC-SHA1' | 'HMAC-SHA256'; form?: string; badSignature?: boolean } = {}): string {
  const method = opts.method ?? 'HMAC-SHA1'
  const params: Record<string, string> = {
    oauth_consumer_key: client.consumerKey,
    oauth_token: client.token,
    oauth_signature_method: method,
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_nonce: randomBytes(8).toString('hex'),
    ...(opts.bodyHash === undefined ? {} : { oauth_body_hash: opts.bodyHash }),
  }
  const pairs = [...Object.entries(params), ...new URLSearchParams(opts.form ?? '')].map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).sort()
  const base = ['POST', percentEncode(`http://${host()}${path}`), percentEncode(pairs.join('&'))].join('&')
  const key = `${percentEncode(client.consumerSecret)}&${percentEncode(client.tokenSecret)}`
  const signature = opts.badSignature ? 'garbage' : createHmac(method === 'HMAC-SHA1' ? 'sha1' : 'sha256', key).update(base).digest('base64')
  return 'OAuth ' + Object.entries({ ...params, oauth_signature: signature }).map(([k, v]) => `${k}="${percentEncode(v)}"`).join(', ')
}

interface Exchange {
  status: number
  head: string
  body: string
  /** Body bytes the client had written when the answer's first byte arrived. */
  sentWhenAnswered: number
}

/**
 * Writes the head, then `body` in 64 KiB steps, each only after the previous one has left
 * (so the count of bytes sent is honest); stops sending once an answer arrives.
 */
function exchange(head: string, body: Buffer): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: port() })
    let out = ''
    let sent = 0
    let answeredAt = -1
    socket.setEncoding('latin1')
    const finish = () => {
      const split = out.indexOf('\r\n\r\n')
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0), head: out.slice(0, split), body: out.slice(split + 4), sentWhenAnswered: answeredAt })
    }
    socket.on('data', (d: string) => {
      if (answeredAt === -1) answeredAt = sent
      out += d
      // The whole answer read: done (the connection may linger).
      const split = out.indexOf('\r\n\r\n')
      const length = /\r\ncontent-length: *(\d+)/i.exec(out.slice(0, split))
      if (split !== -1 && length && Buffer.byteLength(out.slice(split + 4), 'latin1') >= Number(length[1])) {
        finish()
        socket.destroy()
      }
    })
    socket.on('close', finish)
    socket.on('error', () => undefined)
    setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer in 10 s (sent ${sent} of ${body.length} body bytes)`))
    }, 10_000).unref()
    socket.write(head)
    const step = () => {
      if (answeredAt !== -1 || sent >= body.length || socket.destroyed) return
      const chunk = body.subarray(sent, sent + 64 * 1024)
      sent += chunk.length
      socket.write(chunk, () => setImmediate(step))
    }
    step()
  })
}

const twelveMiB = 12 * 1024 * 1024

describe('a credential is proven before any body is read', () => {
  it('OAuth naming a real consumer and token, with oauth_body_hash and a garbage signature: 401 before the 12 MiB body is sent, and the core never sees it', async () => {
    const before = started
    const body = randomBytes(twelveMiB)
    const header = oauth('/api/statuses/update.json', { bodyHash: createHash('sha1').update(body).digest('base64'), badSignature: true })
    const res = await exchange(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${header}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`, body)
    expect(res.status).toBe(401)
    expect(JSON.parse(res.body).error.code).toBe('signature_invalid')
    expect(res.head.toLowerCase()).toContain('connection: close')
    // Answered long before the client could finish: the body was not waited for.
    expect(res.sentWhenAnswered).toBeLessThan(body.length / 2)
    expect(started).toBe(before)
  })

  it('the same with a JSON body of a small declared length: the failure is explained, the body still is not forwarded', async () => {
    const before = started
    const body = Buffer.from('{"status":"hello"}')
    const header = oauth('/api/statuses/update.json', { badSignature: true })
    const res = await exchange(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${header}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, body)
    expect(res.status).toBe(401)
    expect(started).toBe(before)
  })

  it.each([
    ['Basic with a wrong password', () => ({ authorization: `Basic ${Buffer.from('frank:wrong-password').toString('base64')}` })],
    ['WSSE with a wrong digest', () => ({ 'x-wsse': `UsernameToken Username="frank", PasswordDigest="${randomBytes(20).toString('base64')}", Nonce="${randomBytes(16).toString('base64')}", Created="${new Date().toISOString()}"` })],
  ])('%s and a 12 MiB upload: 401 before the body is sent, the core never sees it', async (_name, credential) => {
    const before = started
    const body = randomBytes(twelveMiB)
    const headers = Object.entries(credential()).map(([k, v]) => `${k}: ${v}\r\n`).join('')
    const res = await exchange(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\n${headers}Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${body.length}\r\n\r\n`, body)
    expect(res.status).toBe(401)
    expect(res.sentWhenAnswered).toBeLessThan(body.length / 2)
    expect(started).toBe(before)
  })
})

describe('a body under a valid oauth_body_hash is checked as it streams', () => {
  it('a matching 3 MiB body reaches the core byte for byte, with the hash it must have in the signed identity', async () => {
    const body = randomBytes(3 * 1024 * 1024)
    const bodyHash = createHash('sha1').update(body).digest('base64')
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: oauth('/api/statuses/update.json', { bodyHash }), 'content-type': 'application/octet-stream' }, body })
    expect(res.status).toBe(200)
    const got = seen[seen.length - 1]!
    expect(got.body.equals(body)).toBe(true)
    expect(got.headers['x-kigo-body-sha256']).toBe(`sha1:${createHash('sha1').update(body).digest('base64url')}`)
  })

  it('HMAC-SHA256: the SHA-256 body hash is the digest the core checks', async () => {
    const body = Buffer.from('{"status":"sha-256"}')
    const bodyHash = createHash('sha256').update(body).digest('base64')
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: oauth('/api/statuses/update.json', { bodyHash, method: 'HMAC-SHA256' }), 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    expect(seen[seen.length - 1]!.headers['x-kigo-body-sha256']).toBe(createHash('sha256').update(body).digest('base64url'))
  })

  it('a 3 MiB body that does not match its signed hash: 401 signature_invalid in format, and the core never receives it whole', async () => {
    const whole = seen.length
    const signedBody = randomBytes(3 * 1024 * 1024)
    const sentBody = Buffer.from(signedBody)
    sentBody.writeUInt8(sentBody.readUInt8(sentBody.length - 1) ^ 0xff, sentBody.length - 1)
    const bodyHash = createHash('sha1').update(signedBody).digest('base64')
    const res = await fetch(`${stack.url}/api/statuses/update.xml`, { method: 'POST', headers: { authorization: oauth('/api/statuses/update.xml', { bodyHash }), 'content-type': 'application/octet-stream' }, body: sentBody })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('oauth_problem="signature_invalid"')
    expect(await res.text()).toContain('<code>signature_invalid</code>')
    await new Promise((r) => setTimeout(r, 200))
    expect(seen.length).toBe(whole)
  })

  it('an oauth_body_hash that is not a digest at all is refused before the body is read', async () => {
    const before = started
    const body = randomBytes(twelveMiB)
    const header = oauth('/api/statuses/update.json', { bodyHash: 'not-a-digest' })
    const res = await exchange(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${header}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`, body)
    expect(res.status).toBe(401)
    expect(res.sentWhenAnswered).toBeLessThan(body.length / 2)
    expect(started).toBe(before)
  })
})

describe('a form, read before verification because it is signed, is bounded', () => {
  it('a form within the limit is read, verified and forwarded', async () => {
    const form = `status=${'a'.repeat(1000)}`
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: oauth('/api/statuses/update.json', { form }), 'content-type': 'application/x-www-form-urlencoded' }, body: form })
    expect(res.status).toBe(200)
    expect(seen[seen.length - 1]!.body.toString()).toBe(form)
  })

  it('a form declared past gateway.formBodyLimitBytes: 413 in format before it is read, whoever sends it', async () => {
    const before = started
    const body = Buffer.alloc(4 * 1024 * 1024, 0x61)
    for (const credential of [`Authorization: Basic ${Buffer.from(`frank:${apiPassword}`).toString('base64')}\r\n`, '']) {
      const res = await exchange(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\n${credential}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`, body)
      expect(res.status).toBe(413)
      expect(JSON.parse(res.body).error.code).toBe('body_too_large')
      expect(res.sentWhenAnswered).toBeLessThan(body.length)
    }
    expect(started).toBe(before)
  })

  it('a chunked form that grows past the limit: 413, never forwarded', async () => {
    const before = started
    const chunk = Buffer.alloc(4096, 0x61)
    let text = `POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n`
    for (let i = 0; i < (formLimit * 2) / chunk.length; i++) text += `1000\r\n${chunk.toString('latin1')}\r\n`
    const res = await exchange(text + '0\r\n\r\n', Buffer.alloc(0))
    expect(res.status).toBe(413)
    expect(started).toBe(before)
  })
})

describe('what the path and the method alone decide is answered before the form is read', () => {
  it('a path outside the table, a method the operation lacks, a path two parsers could read apart: answered with no byte of the declared form sent', async () => {
    const before = started
    const cases: Array<[string, string, number, string]> = [
      ['POST', '/api/no/such/operation.json', 404, 'not_found'],
      ['PUT', '/api/statuses/update.json', 405, 'method_not_allowed'],
      ['POST', '/api/statuses/%2e%2e/update.json', 400, 'bad_path'],
    ]
    for (const [method, path, status, code] of cases) {
      for (const credential of [`Authorization: Basic ${Buffer.from(`frank:${apiPassword}`).toString('base64')}\r\n`, '']) {
        // The head declares 10,000 bytes of form and none follow: an answer can only come
        // from a gateway that did not wait for them.
        const res = await exchange(`${method} ${path} HTTP/1.1\r\nHost: ${host()}\r\n${credential}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n`, Buffer.alloc(0))
        expect(res.status, `${method} ${path}`).toBe(status)
        expect(JSON.parse(res.body).error.code, `${method} ${path}`).toBe(code)
      }
    }
    expect(started).toBe(before)
  })
})
