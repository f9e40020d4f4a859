// The gateway's form-body budget is shared by client (docs/security.md#bodies-and-uploads):
// one client holding forms open takes its own share (429 past it) and never makes the
// others' forms 503. Clients are told apart by the address the gateway believes (here,
// X-Forwarded-For from a trusted proxy); raw sockets hold the bodies open.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
let frank: { id: string; api_password: string }
const held: Socket[] = []

beforeAll(async () => {
  stack = await startStack({
    overrides: { trustedProxies: ['127.0.0.1'], gateway: { formBodyLimitBytes: 16_384, formBytesInFlight: 65_536, formBytesInFlightPerClient: 16_384 } },
  })
  frank = await stack.addUser('frank', 'Frank')
})

afterAll(async () => {
  for (const s of held) s.destroy()
  await stack?.close()
})

const port = () => Number(new URL(stack.url).port)
const host = () => new URL(stack.url).host

/** A form post from `address` that sends `sent` of its `length` bytes and then waits; what came back so far. */
function holdForm(address: string, length: number, sent: number): { socket: Socket; answer: () => string } {
  const socket = connect({ host: '127.0.0.1', port: port() })
  held.push(socket)
  let out = ''
  socket.setEncoding('latin1')
  socket.on('data', (d: string) => (out += d))
  socket.on('error', () => undefined)
  socket.write(`POST /api/statuses/update.json HTTP/1.1\r\nHost: ${host()}\r\nX-Forwarded-For: ${address}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${length}\r\n\r\n`)
  socket.write(`status=${'a'.repeat(sent - 7)}`)
  return { socket, answer: () => out }
}

const until = async (test: () => boolean, ms = 5000) => {
  const end = Date.now() + ms
  while (!test() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
}

describe('the form budget per client', () => {
  it('a client holding forms open gets 429 past its share; another client’s form is served', async () => {
    // Five forms of 15,000 bytes held open from one address: 75,000 bytes, more than the 65,536 of all clients.
    const attacker = Array.from({ length: 5 }, () => holdForm('203.0.113.7', 16_000, 15_000))
    await until(() => attacker.filter((a) => a.answer() !== '').length >= 4)
    const answered = attacker.map((a) => a.answer()).filter((t) => t !== '')
    // Its first form fits its share; the rest are refused for it alone.
    expect(answered.length).toBe(4)
    for (const text of answered) {
      expect(text).toMatch(/^HTTP\/1\.1 429 /)
      expect(text).toMatch(/retry-after: 2/i)
    }

    const victim = await fetch(`${stack.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.2', authorization: `Basic ${Buffer.from(`frank:${frank.api_password}`).toString('base64')}` },
      body: new URLSearchParams({ status: 'b'.repeat(6000) }).toString(),
    })
    expect(victim.status).toBe(200)
    expect(((await victim.json()) as { text: string }).text).toBe('b'.repeat(6000))
  })
})
