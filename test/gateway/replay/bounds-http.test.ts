// The in-process nonce cache's global bound over HTTP (docs/security.md#replay-cache-bounds):
// it is sized from the per-client quota and the number of clients, so the 21st client is
// served while 20 others are at their quota; when it is full of live nonces it answers
// 503 (evicting one would open a replay; a bound reached, not counted as a replay-cache
// error), and once their window has passed it serves new
// clients again by evicting the oldest, without a replay getting through.
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { wsseHeader } from '../policy/signers.js'

let upstream: Server
let upstreamUrl: string

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'))
  })
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`
})

afterAll(async () => {
  await new Promise((r) => upstream?.close(r))
})

async function withUsers(stack: Stack, n: number): Promise<Array<{ id: string; key: string }>> {
  const users: Array<{ id: string; key: string }> = []
  for (let i = 1; i <= n; i++) {
    const id = `client${String(i).padStart(2, '0')}`
    users.push({ id, key: (await stack.addUser(id)).api_password })
  }
  return users
}

async function send(stack: Stack, header: Record<string, string>): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${stack.url}/api/statuses/show/1.json`, { headers: header })
  const body = (await res.json()) as { error?: { code: string } }
  return { status: res.status, ...(body.error ? { code: body.error.code } : {}) }
}

describe('sized from the quota and the number of clients', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ coreUrl: upstreamUrl, overrides: { auth: { replayPerClientMax: 3, replayClients: 25 } } })
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
  })

  it('serves the 21st client while 20 others hold their whole quota', async () => {
    const users = await withUsers(stack, 21)
    for (const u of users.slice(0, 20)) {
      for (let i = 0; i < 3; i++) expect((await send(stack, wsseHeader(u.id, u.key, Date.now()))).status, u.id).toBe(200)
      expect(await send(stack, wsseHeader(u.id, u.key, Date.now()))).toEqual({ status: 429, code: 'too_many_requests' })
    }
    const last = users[20]!
    for (let i = 0; i < 3; i++) expect(await send(stack, wsseHeader(last.id, last.key, Date.now()))).toEqual({ status: 200 })
  })
})

describe('full of live nonces, then of expired ones', () => {
  let stack: Stack
  // The gateway's clock, which the test moves on instead of waiting: the WSSE window and
  // the nonces' expiry both read it.
  let ahead = 0
  const clock = () => Date.now() + ahead
  beforeAll(async () => {
    // A 3 s WSSE window: each nonce is held for 7 s (2 windows and a second).
    stack = await startStack({ coreUrl: upstreamUrl, now: clock, overrides: { auth: { replayPerClientMax: 3, replayClients: 20, wsseWindowSeconds: 3 } } })
  }, 60_000)
  afterAll(async () => {
    await stack?.close()
  })

  it('refuses with 503 only while every entry is live, never forgets a live nonce, and serves again once the window has passed', async () => {
    const users = await withUsers(stack, 21)
    const sent: Array<Record<string, string>> = []
    for (const u of users.slice(0, 20)) {
      for (let i = 0; i < 3; i++) {
        const header = wsseHeader(u.id, u.key, clock())
        sent.push(header)
        expect((await send(stack, header)).status).toBe(200)
      }
    }
    const last = users[20]!
    const full = await send(stack, wsseHeader(last.id, last.key, clock()))
    expect(full).toEqual({ status: 503, code: 'replay_cache_unavailable' })
    // A bound reached, not an outage: counted as the request's outcome, not as a replay-cache error.
    const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text()
    expect(metrics).toMatch(/^kigo_auth_requests_total\{[^}]*method="wsse"[^}]*outcome="unavailable"[^}]*\} 1$/m)
    expect(metrics).not.toMatch(/^kigo_replay_cache_errors_total\{[^}]*\} [1-9]/m)
    // Nothing was evicted to make room: every nonce sent is still refused.
    for (const header of sent.slice(0, 5)) expect((await send(stack, header)).status).toBe(401)

    ahead += 7300
    for (let i = 0; i < 3; i++) expect(await send(stack, wsseHeader(last.id, last.key, clock()))).toEqual({ status: 200 })
    // The evicted nonces' requests are outside their window: refused as stale, not replayed.
    for (const header of sent.slice(0, 3)) expect((await send(stack, header)).status).toBe(401)
  })
})
