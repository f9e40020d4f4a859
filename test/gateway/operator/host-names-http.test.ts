// The operator port answers only its own Host names (docs/security.md#request-edges): a
// page on another name re-pointed at the operator's address (DNS rebinding) cannot read
// /metrics or reach the API, and two Host fields are refused as on the public port. Raw
// sockets (test/helpers/raw-http.ts), since Node's client would tidy the head up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bodyOf, rawGet, rawRequest, statusOf } from '../../helpers/raw-http.js'
import { startStack, type Stack } from '../../helpers/stack.js'

let stack: Stack
let port: number

beforeAll(async () => {
  stack = await startStack({ overrides: { gateway: { adminHostNames: ['ops.example', 'scrape.example:9999'] } } })
  port = Number(new URL(stack.adminUrl).port)
})

afterAll(async () => {
  await stack?.close()
})

const raw = (text: string) => rawRequest(port, text)
const get = (path: string, host: string | null, extra: string[] = []) => rawGet(port, path, host, extra)

describe('the operator port and the Host header', () => {
  it('refuses /metrics for a name it does not answer to, however spelled', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, 'EVIL.example', 'localhost.', `localhost.evil.example:${port}`, `127.0.0.1.nip.io:${port}`, 'ops.example.evil.example', `scrape.example:${port}`, '']) {
      const res = await get('/metrics', host)
      expect(statusOf(res), host).toBe(400)
      const body = JSON.parse(bodyOf(res)) as { error: { code: string; message: string } }
      expect(body.error.code, host).toBe('bad_request')
      expect(bodyOf(res), host).not.toContain('kigo_')
    }
  })

  it('refuses the operator API and the dashboard there too, even with the admin token', async () => {
    const api = await get('/admin/users', 'evil.example', [`Authorization: Bearer ${stack.config.adminToken}`])
    expect(statusOf(api)).toBe(400)
    expect(bodyOf(api)).not.toContain('"users"')
    expect(statusOf(await get('/admin/', `evil.example:${port}`))).toBe(400)
  })

  it('refuses a request with no Host, and one with two', async () => {
    expect(statusOf(await raw('GET /metrics HTTP/1.0\r\n\r\n'))).toBe(400)
    const two = await get('/metrics', `127.0.0.1:${port}`, ['Host: evil.example'])
    expect(statusOf(two)).toBe(400)
    expect(JSON.parse(bodyOf(two)).error.message).toMatch(/one Host/)
    const spelled = await raw(`GET /metrics HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nHOST: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
    expect(statusOf(spelled)).toBe(400)
  })

  it('refuses an absolute-form target or `*`, whatever its Host, and a port outside 1 to 65535', async () => {
    for (const target of ['http://evil.example/metrics', `http://127.0.0.1:${port}/metrics`, 'https://localhost/admin/users', '*']) {
      const res = await get(target, `127.0.0.1:${port}`, [`Authorization: Bearer ${stack.config.adminToken}`])
      expect(statusOf(res), target).toBe(400)
      expect(JSON.parse(bodyOf(res)).error.code, target).toBe('bad_request')
      expect(bodyOf(res), target).not.toContain('kigo_')
    }
    for (const host of ['localhost:99999', '127.0.0.1:0', 'ops.example:65536', `localhost:${port}0000000`]) {
      const res = await get('/metrics', host)
      expect(statusOf(res), host).toBe(400)
      expect(bodyOf(res), host).not.toContain('kigo_')
    }
  })

  it('answers the loopback names on any port, and the configured names', async () => {
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, 'localhost:9092', 'ops.example', `ops.example:${port}`, 'scrape.example:9999']) {
      const res = await get('/metrics', host)
      expect(statusOf(res), host).toBe(200)
      expect(bodyOf(res), host).toContain('kigo_')
    }
    // The CLI's and the tests' own way in is unchanged.
    expect((await stack.admin('GET', '/admin/users')).status).toBe(200)
  })
})
