// The core's own /metrics, on a loopback port of its own (not on the public port the
// gateway forwards to): requests and latency per operation, store errors, pool use. And
// the gateway's counters that can be zero are exported at zero from start-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../src/common/config.js'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
})

afterAll(async () => {
  await stack?.close()
})

describe('metrics', () => {
  it('has every series the Grafana dashboard\'s core panels query, under the job the Prometheus example scrapes', async () => {
    const dashboard = JSON.parse(readFileSync(join(projectRoot, 'config', 'grafana-dashboard.json'), 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> }
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr).filter((e) => e.includes('job="kigo-core"'))
    expect(exprs.length).toBeGreaterThanOrEqual(4)
    const text = await (await fetch(`${stack.coreMetricsUrl}/metrics`)).text()
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b(kigo_core_[a-z0-9_]+)\{/g)].map((m) => m[1]!)))
    expect([...used].sort()).toEqual(expect.arrayContaining(['kigo_core_request_duration_seconds_bucket', 'kigo_core_requests_total', 'kigo_core_store_errors_total']))
    for (const name of used) expect(new RegExp(`^# TYPE ${name.replace(/_(bucket|count|sum)$/, '')} `, 'm').test(text), name).toBe(true)
    // Grouped by operation: the label the core and the gateway share.
    expect(exprs.filter((e) => e.includes('kigo_core_request')).every((e) => /by \((le, )?operation/.test(e))).toBe(true)
    expect(readFileSync(join(projectRoot, 'config', 'prometheus.yml'), 'utf8')).toMatch(/^\s+- job_name: kigo-core$/m)
  })


  it('the core counts requests and latency per operation on its metrics port', async () => {
    expect(stack.coreMetricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect((await fetch(`${stack.url}/api/statuses/show/1.json`)).status).toBe(404)
    const res = await fetch(`${stack.coreMetricsUrl}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = await res.text()
    // Labelled by the route table's operation name, as the gateway labels its requests.
    expect(text).toMatch(/^kigo_core_requests_total\{operation="statuses\/show",method="GET",status_class="4xx"\} 1$/m)
    expect(text).toMatch(/^kigo_core_request_duration_seconds_count\{operation="statuses\/show"\} 1$/m)
    expect(text).not.toContain('operation="/api/')
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
