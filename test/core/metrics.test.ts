// The core's own /metrics, on a loopback port of its own (not on the public port the
// gateway forwards to): requests and latency per operation, store errors, pool use. And
// the gateway's counters that can be zero are exported at zero from start-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
})

afterAll(async () => {
  await stack?.close()
})

describe('metrics', () => {
  it('the core counts requests and latency per operation on its metrics port', async () => {
    expect(stack.coreMetricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect((await fetch(`${stack.url}/api/statuses/show/1.json`)).status).toBe(404)
    const res = await fetch(`${stack.coreMetricsUrl}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = await res.text()
    expect(text).toMatch(/^kigo_core_requests_total\{operation="\/api\/statuses\/show\/[^"]+",method="GET",status_class="4xx"\} 1$/m)
    expect(text).toMatch(/^kigo_core_request_duration_seconds_count\{operation="\/api\/statuses\/show\/[^"]+"\} 1$/m)
    expect(text).toMatch(/^kigo_core_store_errors_total\{operation="any"\} 0$/m)
    expect(text).toMatch(/^kigo_core_store_pool_connections \d+$/m)
    expect(text).toMatch(/^process_cpu_user_seconds_total /m)
    // Not served to the public through the gateway.
    expect((await fetch(`${stack.url}/metrics`)).status).toBe(404)
  })

  it('the gateway exports replay-cache counters and the policy from start-up', async () => {
    const text = await (await fetch(`${stack.adminUrl}/metrics`)).text()
    for (const method of ['wsse', 'oauth']) {
      expect(text).toMatch(new RegExp(`^kigo_replay_cache_errors_total\\{method="${method}"\\} 0$`, 'm'))
      expect(text).toMatch(new RegExp(`^kigo_replay_cache_fail_open_total\\{method="${method}"\\} 0$`, 'm'))
    }
    expect(text).toMatch(/^kigo_throttle_errors_total 0$/m)
    expect(text).toMatch(/^kigo_policy_state\{method="basic",state="allow"\} 1$/m)
    expect(text).toMatch(/^kigo_policy_sunset_timestamp_seconds\{method="wsse"\} 0$/m)
  })
})
