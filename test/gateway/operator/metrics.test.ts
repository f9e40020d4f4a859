// Prometheus metrics (docs/gateway.md#metrics) after a known mix of requests through a whole kigo:
// 3 OAuth, 2 Basic, 1 WSSE and 1 WSSE replay, one anonymous read, one bad Basic password.
// Every counter and histogram count is read back from GET /metrics on the operator port.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../../src/common/config.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { basicHeader, form, oauthHeader, wsseHeader } from '../policy/signers.js'

let stack: Stack
let text: string
let contentType: string | null

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** The text exposition format, one sample per line (comments skipped). */
function parse(body: string): Sample[] {
  const samples: Sample[] = []
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`unparsable metrics line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!
    samples.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return samples
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).filter((k) => k !== 'le').length === Object.keys(labels).length)?.value
}

beforeAll(async () => {
  stack = await startStack()
  const alice = await stack.addUser('alice', 'Alice')
  const client = await stack.addOAuthClient('alice', ['write_public'])
  const update = `${stack.url}/api/statuses/update.json`
  const send = (headers: Record<string, string>, status: string) =>
    fetch(update, { method: 'POST', headers: { ...form, ...headers }, body: new URLSearchParams({ status }) })

  const statuses: number[] = []
  for (let i = 0; i < 3; i++) {
    statuses.push((await send(oauthHeader(client, { url: update, method: 'POST', data: { status: `oauth ${i}` } }, Date.now()), `oauth ${i}`)).status)
  }
  for (let i = 0; i < 2; i++) statuses.push((await send(basicHeader('alice', alice.api_password), `basic ${i}`)).status)
  const wsse = wsseHeader('alice', alice.api_password, Date.now())
  statuses.push((await send(wsse, 'wsse')).status)
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200])
  expect((await send(wsse, 'wsse again')).status).toBe(401)
  expect((await send(basicHeader('alice', 'wrong'), 'nope')).status).toBe(401)
  expect((await fetch(`${stack.url}/api/statuses/show/1.json`)).status).toBe(200)

  const res = await fetch(`${stack.adminUrl}/metrics`)
  expect(res.status).toBe(200)
  contentType = res.headers.get('content-type')
  text = await res.text()
})

afterAll(async () => {
  await stack?.close()
})

describe('GET /metrics', () => {
  it('is the Prometheus text format, open without the admin token', () => {
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(text).toMatch(/^# HELP kigo_auth_requests_total /m)
    expect(text).toMatch(/^# TYPE kigo_auth_duration_seconds histogram$/m)
  })

  it('counts every request by method, outcome and route: exactly the mix sent', () => {
    const series = parse(text).filter((s) => s.name === 'kigo_auth_requests_total')
    const seen = Object.fromEntries(series.map((s) => [`${s.labels.method} ${s.labels.outcome} ${s.labels.route}`, s.value]))
    expect(seen).toEqual({
      'oauth ok statuses/update': 3,
      'basic ok statuses/update': 2,
      'wsse ok statuses/update': 1,
      'wsse replay statuses/update': 1,
      'basic bad_credentials statuses/update': 1,
      'none ok statuses/show': 1,
    })
  })

  it('times the auth stage per method and the upstream per route and status class', () => {
    const samples = parse(text)
    expect(value(samples, 'kigo_auth_duration_seconds_count', { method: 'oauth' })).toBe(3)
    expect(value(samples, 'kigo_auth_duration_seconds_count', { method: 'basic' })).toBe(3)
    expect(value(samples, 'kigo_auth_duration_seconds_count', { method: 'wsse' })).toBe(2)
    // The anonymous read verified nothing: it is counted (kigo_auth_requests_total), not timed.
    expect(value(samples, 'kigo_auth_duration_seconds_count', { method: 'none' })).toBeUndefined()
    expect(value(samples, 'kigo_auth_duration_seconds_sum', { method: 'oauth' })).toBeGreaterThan(0)
    // Only forwarded requests reach the core: 6 writes and 1 read.
    expect(value(samples, 'kigo_upstream_duration_seconds_count', { route: 'statuses/update', status_class: '2xx' })).toBe(6)
    expect(value(samples, 'kigo_upstream_duration_seconds_count', { route: 'statuses/show', status_class: '2xx' })).toBe(1)
    const buckets = samples.filter((s) => s.name === 'kigo_auth_duration_seconds_bucket' && s.labels.method === 'oauth')
    expect(buckets.find((b) => b.labels.le === '+Inf')?.value).toBe(3)
  })

  it('declares the replay-cache counters, at zero while the cache is healthy', () => {
    expect(text).toMatch(/^# TYPE kigo_replay_cache_errors_total counter$/m)
    expect(text).toMatch(/^# TYPE kigo_replay_cache_fail_open_total counter$/m)
    const samples = parse(text)
    const sum = (name: string) => samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0)
    expect(sum('kigo_replay_cache_errors_total')).toBe(0)
    expect(sum('kigo_replay_cache_fail_open_total')).toBe(0)
  })

  it('exports process metrics', () => {
    const names = new Set(parse(text).map((s) => s.name))
    for (const n of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(names, n).toContain(n)
    }
  })

  it('keeps labels bounded: no user, consumer or token anywhere in kigo metrics', () => {
    // `state`: the policy state of kigo_policy_state, a closed set of four; `kind`: what a
    // mail is (kigo_mail_total: reset, confirmation, notice…) and `step`: a notice's step,
    // closed sets written in the code.
    const allowed = new Set(['method', 'outcome', 'route', 'status_class', 'le', 'state', 'kind', 'step'])
    for (const s of parse(text).filter((x) => x.name.startsWith('kigo_'))) {
      for (const label of Object.keys(s.labels)) expect(allowed, `${s.name} has label ${label}`).toContain(label)
    }
    expect(text).not.toContain('alice')
  })

  it('has every series the Grafana dashboard queries, under the job the Prometheus example scrapes', () => {
    const dashboard = JSON.parse(readFileSync(join(projectRoot, 'config', 'grafana-dashboard.json'), 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }> }
    // The core's panels are checked against the core's metrics (test/core/metrics.test.ts).
    const all = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr)
    for (const e of all) expect(e).toMatch(/job="kigo-(gateway|core)"/)
    const exprs = all.filter((e) => !e.includes('job="kigo-core"'))
    expect(exprs.length).toBeGreaterThan(10)
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:kigo|process|nodejs)_[a-z0-9_]+)\{/g)].map((m) => m[1]!)))
    expect(used.size).toBeGreaterThanOrEqual(9)
    const exported = new Set(parse(text).map((s) => s.name))
    for (const name of used) {
      // Counters and histograms without samples yet still declare themselves.
      const declared = exported.has(name) || new RegExp(`^# TYPE ${name.replace(/_(bucket|count|sum)$/, '')} `, 'm').test(text)
      expect(declared, name).toBe(true)
    }
    for (const e of exprs) expect(e).toContain('job="kigo-gateway"')
    expect(readFileSync(join(projectRoot, 'config', 'prometheus.yml'), 'utf8')).toMatch(/^\s+- job_name: kigo-gateway$/m)
  })
})
