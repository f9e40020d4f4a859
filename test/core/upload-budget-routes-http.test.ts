// The upload budget counts the bodies of the operations that take files only
// (docs/security.md#bodies-and-uploads): while uploads fill it, a multipart body to an
// operation without files (friendships/create) is still served. Such a body is bounded all
// the same: at most what a form may be (413), and cut at the upload deadline (408). Through
// HTTP against a running gateway and core; a raw socket holds an upload open.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { bodyOf, rawRequest, statusOf } from '../helpers/raw-http.js'

let stack: Stack
const users = new Map<string, string>()
const held: Socket[] = []

beforeAll(async () => {
  stack = await startStack({ overrides: { core: { uploads: { bytesInFlight: 4096, bytesInFlightPerUser: 4096, timeoutMs: 20_000 } } } })
  for (const id of ['ann', 'bob', 'cat']) users.set(id, (await stack.addUser(id)).api_password)
  // ann has posted once, so the core knows her.
  const posted = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: basic('ann'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'status=hello' })
  expect(posted.status).toBe(200)
})

afterAll(async () => {
  for (const s of held) s.destroy()
  await stack?.close()
})

const basic = (id: string) => `Basic ${Buffer.from(`${id}:${users.get(id)}`).toString('base64')}`
const boundary = 'kigo-test-boundary'

describe('the upload budget and operations without files', () => {
  it('uploads holding the whole budget do not refuse a multipart follow', async () => {
    // ann's statuses/update upload declares 4,000 bytes and sends 3,900: the budget (4,096) is all but full.
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(stack.url).port) })
    held.push(socket)
    let answer = ''
    socket.setEncoding('latin1')
    socket.on('data', (d: string) => (answer += d))
    socket.on('error', () => undefined)
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`
    socket.write(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nAuthorization: ${basic('ann')}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 4000\r\n\r\n`)
    socket.write(head + 'x'.repeat(3900 - head.length))
    await new Promise((r) => setTimeout(r, 500))

    // A further upload is refused: the budget is full.
    const upload = await fetch(`${stack.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { authorization: basic('cat'), 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.png"\r\nContent-Type: image/png\r\n\r\n${'y'.repeat(400)}\r\n--${boundary}--\r\n`,
    })
    expect(upload.status).toBe(503)
    expect(((await upload.json()) as { error: { code: string } }).error.code).toBe('uploads_busy')

    // bob follows ann with a multipart body (no file): served.
    const follow = await fetch(`${stack.url}/api/friendships/create/ann.json`, {
      method: 'POST',
      headers: { authorization: basic('bob'), 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${'z'.repeat(400)}\r\n--${boundary}--\r\n`,
    })
    const followText = await follow.text()
    expect(follow.status, followText).toBe(200)
    expect(JSON.parse(followText)).toMatchObject({ id: 'ann' })
    expect(answer).toBe('')
  })

  const heldFollow = (declared: number, sent: number) => {
    const part = `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n`
    return rawRequest(
      Number(new URL(stack.url).port),
      `POST /api/friendships/create/ann.json HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\nAuthorization: ${basic('bob')}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declared}\r\n\r\n${part}${'n'.repeat(sent - part.length)}`,
    )
  }

  it('a multipart body without files declared larger than a form may be is 413, refused before it is read', async () => {
    // Declares 38 MiB, sends 64 KiB and holds: answered at once, in format, and the connection closes.
    const answer = await heldFollow(38 * 1024 * 1024, 64 * 1024)
    expect(statusOf(answer), answer).toBe(413)
    expect(JSON.parse(bodyOf(answer))).toMatchObject({ error: { code: 'body_too_large' } })
  })

  it('a multipart body without files held open is cut at the upload deadline: 408 in format', async () => {
    const answer = await heldFollow(4000, 1000)
    expect(statusOf(answer), answer).toBe(408)
    expect(JSON.parse(bodyOf(answer))).toMatchObject({ error: { code: 'request_timeout' } })
  }, 60_000)
})
