// The core's metrics port answers only its own Host names, as the operator port does
// (docs/operations.md#operator-port-host-names, docs/security.md#request-edges): a page on
// another name re-pointed at the port's address (DNS rebinding) cannot read /metrics, and a
// request with no Host or two is refused. Through a real core, over raw sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bodyOf, rawGet, rawRequest, statusOf } from '../helpers/raw-http.js'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
let port: number

beforeAll(async () => {
  stack = await startStack({ overrides: { core: { metricsHostNames: ['core:9091', 'prom.example'] } } })
  port = Number(new URL(stack.coreMetricsUrl!).port)
})

afterAll(async () => {
  await stack?.close()
})

const get = (host: string | null, extra: string[] = [], target = '/metrics') => rawGet(port, target, host, extra)

describe("the core's metrics port and the Host header", () => {
  it('answers the loopback names on any port, and the configured names', async () => {
    for (const host of [`127.0.0.1:${port}`, 'localhost', `[::1]:${port}`, 'core:9091', 'CORE:9091', 'prom.example', `prom.example:${port}`]) {
      const res = await get(host)
      expect(statusOf(res), host).toBe(200)
      expect(bodyOf(res), host).toContain('kigo_core_')
    }
  })

  it('refuses any other name, however spelled, in JSON and without a metric', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `core:${port}`, 'core', 'localhost.', `localhost.evil.example:${port}`, 'prom.example.evil.example', '']) {
      const res = await get(host)
      expect(statusOf(res), host).toBe(400)
      const { error } = JSON.parse(bodyOf(res)) as { error: { code: string; message: string } }
      expect(error.code, host).toBe('bad_request')
      expect(error.message, host).toContain('KIGO_CORE_METRICS_HOST_NAMES')
      expect(bodyOf(res), host).not.toContain('kigo_core_')
    }
  })

  it('refuses an absolute-form target or `*`, and a port outside 1 to 65535', async () => {
    for (const target of ['http://evil.example/metrics', `http://127.0.0.1:${port}/metrics`, '*']) {
      const res = await get(`127.0.0.1:${port}`, [], target)
      expect(statusOf(res), target).toBe(400)
      expect(bodyOf(res), target).not.toContain('kigo_core_')
    }
    for (const host of ['localhost:99999', '127.0.0.1:0', 'prom.example:99999']) {
      const res = await get(host)
      expect(statusOf(res), host).toBe(400)
      expect(bodyOf(res), host).not.toContain('kigo_core_')
    }
  })

  it('refuses a request with no Host, and one with two', async () => {
    expect(statusOf(await rawRequest(port, 'GET /metrics HTTP/1.0\r\n\r\n'))).toBe(400)
    const two = await get(`127.0.0.1:${port}`, ['Host: evil.example'])
    expect(statusOf(two)).toBe(400)
    expect(bodyOf(two)).not.toContain('kigo_core_')
  })
})
