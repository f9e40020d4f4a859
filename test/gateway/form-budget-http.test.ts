// The forms the gateway holds at once are bounded (docs/security.md#bodies-and-uploads):
// past gateway.formBytesInFlight a form is refused before more of it is read, 503 with
// Retry-After in the path's format, as classifyFailure answers the gateway's named
// failure (FormBytesBusy); the bytes come back when the form that held them is answered.
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
const inFlight = 1024

beforeAll(async () => {
  // Nothing here reaches the core: a port nothing listens on stands in for it.
  stack = await startStack({ coreUrl: `http://127.0.0.1:${await freePort()}`, overrides: { gateway: { formBytesInFlight: inFlight, formBodyLimitBytes: 4096 } } })
}, 120_000)

afterAll(async () => {
  await stack?.close()
})

/** A form POST whose head declares `declared` bytes, of which `sent` are sent now; the socket stays open. */
function holdForm(declared: number, sent: number): Socket {
  const { port } = new URL(stack.url)
  const socket = connect(Number(port), '127.0.0.1')
  socket.write(`POST /api/statuses/update.xml HTTP/1.1\r\nHost: localhost:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${declared}\r\n\r\n`)
  socket.write(`status=${'a'.repeat(sent - 7)}`)
  socket.on('error', () => undefined)
  return socket
}

const post = (ext: string) => fetch(`${stack.url}/api/statuses/update.${ext}`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: `status=${'b'.repeat(300)}`,
})

/** The answer to `post('json')` once `until` holds for its status (the gateway reads a socket's bytes when they arrive, not when they are written). */
async function postUntil(until: (status: number) => boolean): Promise<Response> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const res = await post('json')
    if (until(res.status) || Date.now() > deadline) return res
    await res.arrayBuffer()
  }
}

describe('gateway.formBytesInFlight', () => {
  it('a form arriving while others hold the budget: 503 service_unavailable with Retry-After, in format; accepted again once they are answered', async () => {
    const held = holdForm(1000, 900)
    try {
      const json = await postUntil((status) => status !== 401)
      expect(json.status).toBe(503)
      expect(json.headers.get('retry-after')).toBe('2')
      expect(await json.json()).toEqual({ error: { status: 503, code: 'service_unavailable', message: 'The gateway is reading too many request bodies; try again shortly' } })
      const xml = await post('xml')
      expect(xml.status).toBe(503)
      expect(xml.headers.get('content-type')).toMatch(/xml/)
      expect(await xml.text()).toContain('service_unavailable')
    } finally {
      held.destroy()
    }
    // The held form's connection is gone: its bytes are given back, and the same form is
    // read and checked again (401: it names no credential).
    expect((await postUntil((status) => status !== 503)).status).toBe(401)
  })
})
