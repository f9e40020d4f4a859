// Uploads held in memory are bounded (docs/operations-memory.md): in bytes for all uploads
// together (503 uploads_busy), per account (429), and in time (408), each answered in
// format with the connection closed, and the bytes given back once the upload is gone.
// Through HTTP against a running gateway and core, with small limits.
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { pngHeader } from '../helpers/image-headers.js'
import { authorizationHeader, hmacSha1Signature, protocolParams, type OAuthCredentials } from '../helpers/oauth-header.js'
import { createHash } from 'node:crypto'

const KiB = 1024
const MiB = 1024 * KiB
const timeoutMs = 4000

let stack: Stack
const passwords = new Map<string, string>()
let client: OAuthCredentials

beforeAll(async () => {
  stack = await startStack({
    overrides: {
      core: { limits: { fileBytes: 2 * MiB }, uploads: { bytesInFlight: 4 * MiB, bytesInFlightPerUser: 1536 * KiB, timeoutMs } },
    },
  })
  for (const id of ['ann', 'bob', 'cat', 'dan', 'eve']) passwords.set(id, (await stack.addUser(id)).api_password)
  client = await stack.addOAuthClient('eve', ['read_public', 'write_public'])
}, 120_000)

afterAll(async () => {
  await stack?.close()
})

interface Answer { status: number; head: string; body: string }

interface Upload {
  socket: Socket
  /** Resolves with the answer, whenever it comes (or status 0 when the connection closes without one). */
  answer: Promise<Answer>
}

const boundary = 'kigo-upload-boundary'

/** The multipart head of one `file` part holding a PNG of `size` bytes. */
function filePart(size: number): { head: Buffer; image: Buffer; tail: Buffer } {
  const image = Buffer.concat([pngHeader(8, 8), randomBytes(size - 33)])
  return {
    head: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
  }
}

/**
 * statuses/update as `user`, with one image of `imageBytes`: the first `send` bytes of the
 * body are written (all by default) and the connection is held open. `declare` false sends
 * it chunked, without a length.
 */
function upload(user: string, imageBytes: number, opts: { send?: number; declare?: boolean } = {}): Upload {
  const { head, image, tail } = filePart(imageBytes)
  const body = Buffer.concat([head, image, tail])
  const send = opts.send ?? body.length
  const declare = opts.declare ?? true
  const socket = connect({ host: '127.0.0.1', port: Number(new URL(stack.url).port) })
  const auth = Buffer.from(`${user}:${passwords.get(user)}`).toString('base64')
  socket.write(
    `POST /api/statuses/update.json HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nAuthorization: Basic ${auth}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\n${declare ? `Content-Length: ${body.length}` : 'Transfer-Encoding: chunked'}\r\n\r\n`,
  )
  const part = body.subarray(0, send)
  if (declare) {
    socket.write(part)
  } else {
    socket.write(`${part.length.toString(16)}\r\n`)
    socket.write(part)
    socket.write(send === body.length ? '\r\n0\r\n\r\n' : '\r\n')
  }
  const answer = new Promise<Answer>((resolve) => {
    let out = ''
    socket.setEncoding('latin1')
    const done = () => {
      const split = out.indexOf('\r\n\r\n')
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0), head: out.slice(0, split).toLowerCase(), body: out.slice(split + 4) })
    }
    socket.on('data', (d: string) => {
      out += d
      const split = out.indexOf('\r\n\r\n')
      const length = /\r\ncontent-length: *(\d+)/i.exec(out.slice(0, split))
      if (split !== -1 && length && Buffer.byteLength(out.slice(split + 4), 'latin1') >= Number(length[1])) done()
    })
    socket.on('close', done)
    socket.on('error', () => undefined)
  })
  return { socket, answer }
}

/** Waits until the bytes written on `u` have left this process, and a little for the stack to take them. */
async function settled(...uploads: Upload[]): Promise<void> {
  await Promise.all(uploads.map((u) => new Promise<void>((r) => u.socket.write('', () => r()))))
  await new Promise((r) => setTimeout(r, 400))
}

const errorOf = (a: Answer) => (JSON.parse(a.body) as { error: { code: string } }).error.code

describe('uploads held in memory are bounded', () => {
  it('a complete upload within the bounds is posted', async () => {
    const a = await upload('ann', 512 * KiB).answer
    expect(a.status).toBe(200)
  })

  it('an upload held open past core.uploads.timeoutMs: 408 request_timeout in format, and the connection closes', async () => {
    const started = Date.now()
    const held = upload('ann', 1 * MiB, { send: 100 * KiB })
    const a = await held.answer
    expect(a.status).toBe(408)
    expect(errorOf(a)).toBe('request_timeout')
    expect(a.head).toContain('connection: close')
    expect(Date.now() - started).toBeGreaterThanOrEqual(timeoutMs - 500)
    expect(Date.now() - started).toBeLessThan(timeoutMs + 4000)
    held.socket.destroy()
  }, 20_000)

  it("past one account's share (core.uploads.bytesInFlightPerUser): 429 with Retry-After for that account only", async () => {
    const first = upload('bob', 1400 * KiB, { send: 1200 * KiB })
    await settled(first)
    // Chunked: no length to refuse it by; refused once its bytes pass the share.
    const second = upload('bob', 1 * MiB, { declare: false, send: 600 * KiB })
    const a = await second.answer
    expect(a.status).toBe(429)
    expect(errorOf(a)).toBe('too_many_requests')
    expect(a.head).toMatch(/retry-after: \d+/)
    // Another account is not affected.
    expect((await upload('cat', 256 * KiB).answer).status).toBe(200)
    first.socket.destroy()
    second.socket.destroy()
  }, 20_000)

  it('past core.uploads.bytesInFlight: 503 uploads_busy with Retry-After; accepted again once the held uploads are gone', async () => {
    const held = [upload('ann', 1400 * KiB, { send: 1300 * KiB }), upload('bob', 1400 * KiB, { send: 1300 * KiB }), upload('cat', 1400 * KiB, { send: 1300 * KiB })]
    await settled(...held)
    for (const opts of [{ declare: true }, { declare: false }]) {
      const refused = await upload('dan', 1 * MiB, opts).answer
      expect(refused.status).toBe(503)
      expect(errorOf(refused)).toBe('uploads_busy')
      expect(refused.head).toMatch(/retry-after: \d+/)
    }
    for (const h of held) h.socket.destroy()
    await new Promise((r) => setTimeout(r, 500))
    expect((await upload('eve', 1 * MiB).answer).status).toBe(200)
  }, 30_000)
})

describe('a multipart upload under oauth_body_hash, through the gateway and the core', () => {
  const post = (signedBody: Buffer, sentBody: Buffer) => {
    const path = '/api/statuses/update.json'
    const params = protocolParams(client, { oauth_body_hash: createHash('sha1').update(signedBody).digest('base64') })
    const header = authorizationHeader(params, hmacSha1Signature(client, 'POST', `${stack.url}${path}`, Object.entries(params)))
    return fetch(`${stack.url}${path}`, { method: 'POST', headers: { authorization: header, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: new Uint8Array(sentBody) })
  }
  const body = (bytes: number) => {
    const { head, image, tail } = filePart(bytes)
    return Buffer.concat([head, image, tail])
  }

  it('the body whose hash was signed is streamed and posted', async () => {
    const b = body(1 * MiB)
    const res = await post(b, b)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { text: string }).text).toContain('/photos/eve/')
  })

  it('another body of the same length: 401 signature_invalid, and nothing is posted', async () => {
    const timeline = async () => ((await (await fetch(`${stack.url}/api/statuses/user_timeline/eve.json`)).json()) as unknown[]).length
    const before = await timeline()
    const res = await post(body(1 * MiB), body(1 * MiB))
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('signature_invalid')
    expect(await timeline()).toBe(before)
  })
})
