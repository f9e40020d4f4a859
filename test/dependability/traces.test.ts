// OpenTelemetry traces (docs/operations.md#traces) from real processes into an OTLP/HTTP JSON
// receiver: the span tree of one signed write through the gateway, the core and their SQL,
// in production mode (separate processes, PostgreSQL, Redis) and in embedded mode; no
// credential in any attribute; log lines carrying the trace; sampling by OTEL_TRACES_SAMPLER.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basicAuthorization, oauthAuthorization, wsseHeader } from '../../bench/signing.js'
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'
import { availableRedis, freshPostgres } from '../helpers/services.js'
import { freePort, stackEnv } from '../helpers/stack.js'

const mainJs = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url))
const pgDb = await freshPostgres()
const redisUrl = await availableRedis()

interface Started {
  child: ChildProcess
  output: () => string
  stop(): Promise<void>
}

async function startApp(mode: string, env: Record<string, string>, readyUrl: string): Promise<Started> {
  const child = spawn(process.execPath, [mainJs, mode], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    await exited
    clearTimeout(timer)
  }
  // PGlite's first start (a new data directory) takes long on a loaded machine.
  const deadline = Date.now() + 150_000
  while (!(await fetch(readyUrl).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop()
      throw new Error(`${mode} did not start:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return { child, output: () => output, stop }
}

/** A W3C traceparent of the caller, and its parts. */
function callerContext(traceId = randomBytes(16).toString('hex')): { traceId: string; spanId: string; traceparent: string } {
  const spanId = randomBytes(8).toString('hex')
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

async function admin<T>(adminUrl: string, token: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(adminUrl + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

async function eventually(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const child = (spans: ReceivedSpan[], parent: ReceivedSpan, name: string | RegExp): ReceivedSpan[] =>
  spans.filter((s) => s.parentSpanId === parent.spanId && (typeof name === 'string' ? s.name === name : name.test(s.name)))

const one = (found: ReceivedSpan[], what: string): ReceivedSpan => {
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}`)
  return found[0]!
}

/** The descendants of `root` (itself excluded). */
function below(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  const walk = (id: string) => {
    for (const s of spans) {
      if (s.parentSpanId !== id) continue
      out.push(s)
      walk(s.spanId)
    }
  }
  walk(root.spanId)
  return out
}

/**
 * The path of one signed write, from the caller's span down to the core's SQL, and its
 * attributes. Returns the core's server span.
 */
function expectSignedWriteTree(spans: ReceivedSpan[], caller: { spanId: string }, method: 'wsse' | 'oauth'): void {
  const server = one(spans.filter((s) => s.parentSpanId === caller.spanId), 'gateway server span continuing the caller')
  expect(server).toMatchObject({ service: 'kigo-gateway', kind: 2, name: 'POST statuses/update' })
  expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': 'statuses/update', 'http.response.status_code': 200 })

  const auth = one(child(spans, server, 'kigo.authenticate'), 'authentication span')
  expect(auth.attributes).toMatchObject({ 'kigo.auth.method': method, 'kigo.auth.outcome': 'ok' })
  const claim = one(child(spans, auth, 'kigo.replay.claim'), 'replay claim span')
  expect(claim.attributes).toMatchObject({ 'kigo.auth.method': method, 'kigo.replay.fresh': true })
  // The credential lookup is SQL under the authentication (or a cache hit, with none).
  for (const sql of below(spans, auth).filter((s) => s.attributes['db.system'] !== undefined)) expect(sql.service).toBe('kigo-gateway')
  // The migration policy is asked for legacy methods only (OAuth is always allowed).
  if (method === 'wsse') expect(one(child(spans, auth, 'kigo.policy'), 'policy span').attributes).toMatchObject({ 'kigo.auth.method': 'wsse', 'kigo.policy.allowed': true })

  const forward = one(child(spans, server, 'POST core'), 'forward client span')
  expect(forward).toMatchObject({ service: 'kigo-gateway', kind: 3 })
  expect(forward.attributes['http.response.status_code']).toBe(200)

  const core = one(spans.filter((s) => s.parentSpanId === forward.spanId), 'core server span')
  expect(core).toMatchObject({ service: 'kigo-core', kind: 2 })
  expect(core.attributes['http.response.status_code']).toBe(200)
  const statements = below(spans, core).filter((s) => s.attributes['db.system'] === 'postgresql')
  expect(statements.length).toBeGreaterThan(0)
  for (const s of statements) {
    expect(s.service).toBe('kigo-core')
    expect(s.kind).toBe(3)
    expect(typeof s.attributes['db.query.text']).toBe('string')
  }
  // The entry itself: a statement that inserts it, its text with placeholders, not the status's words.
  const insert = statements.find((s) => String(s.attributes['db.query.text']).includes('INSERT INTO kigo_core.entries') && String(s.attributes['db.query.text']).includes('$1'))
  expect(insert).toBeDefined()
  for (const s of statements) expect(String(s.attributes['db.query.text'])).not.toContain('traced hello')
}

/** No attribute of any span names or holds a credential. */
function expectNoCredentials(spans: ReceivedSpan[], secrets: string[]): void {
  expect(spans.length).toBeGreaterThan(0)
  for (const s of spans) {
    for (const [key, value] of Object.entries(s.attributes)) {
      expect(key).not.toMatch(/authorization|wsse|signature|password|secret|cookie/i)
      const text = String(value)
      for (const secret of secrets) expect(text).not.toContain(secret)
      expect(text).not.toMatch(/oauth_signature|PasswordDigest|UsernameToken|^Basic |^OAuth |v1=/)
    }
  }
}

const otlpEnv = (receiver: OtlpReceiver, extra: Record<string, string> = {}): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '100',
  ...extra,
})

describe.skipIf(!pgDb || !redisUrl)('traces in production mode (gateway and core processes, PostgreSQL, Redis)', () => {
  let receiver: OtlpReceiver
  let dir: string
  let core: Started | undefined
  let gateway: Started | undefined
  let url: string
  let adminUrl: string
  let coreMetricsUrl: string
  let env: Record<string, string>

  beforeAll(async () => {
    receiver = await OtlpReceiver.start()
    dir = mkdtempSync(join(tmpdir(), 'kigo-traces-'))
    const coreMetricsPort = await freePort()
    coreMetricsUrl = `http://127.0.0.1:${coreMetricsPort}/metrics`
    // This gateway stands behind a proxy trusted to have decided: it continues the caller's trace.
    const s = await stackEnv(dir, { DATABASE_URL: pgDb!.url, REDIS_URL: redisUrl!, KIGO_GATEWAY_BIND: '127.0.0.1', LOG_LEVEL: 'info', KIGO_CORE_METRICS_PORT: String(coreMetricsPort), KIGO_TRACE_CALLER_CONTEXT: 'continue' })
    env = { ...s.env, ...otlpEnv(receiver, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_EXPORTER: 'otlp' }) }
    url = `http://localhost:${s.gatewayPort}`
    adminUrl = `http://127.0.0.1:${s.adminPort}`
    core = await startApp('core', env, `http://127.0.0.1:${s.corePort}/readyz`)
    gateway = await startApp('gateway', env, `http://127.0.0.1:${s.gatewayPort}/readyz`)
  }, 200_000)

  afterAll(async () => {
    await gateway?.stop()
    await core?.stop()
    await receiver?.close()
    await pgDb?.drop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('one WSSE statuses/update: the caller\'s trace through authentication, replay claim, policy, forward, core and SQL; no credential anywhere; log lines carry the IDs', async () => {
    const user = await admin<{ id: string; api_password: string; password: string }>(adminUrl, env.KIGO_ADMIN_TOKEN!, '/admin/users', { id: 'tracy' })
    const caller = callerContext()
    const header = wsseHeader('tracy', user.api_password)
    const res = await fetch(`${url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { 'x-wsse': header, traceparent: caller.traceparent, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=traced+hello',
    })
    expect(res.status).toBe(200)
    await eventually(() => receiver.trace(caller.traceId).some((s) => s.service === 'kigo-core' && s.kind === 2) && receiver.trace(caller.traceId).some((s) => s.service === 'kigo-gateway' && s.kind === 2), 'both server spans')
    // The core's SQL spans end before its server span; the batch that holds them may come apart.
    await new Promise((r) => setTimeout(r, 500))
    expectSignedWriteTree(receiver.trace(caller.traceId), caller, 'wsse')

    // A Basic write as well, so that every credential form has been sent once.
    const basic = basicAuthorization('tracy', user.api_password)
    expect((await fetch(`${url}/api/statuses/update.json`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'status=second' })).status).toBe(200)
    await eventually(() => receiver.spans.some((s) => s.attributes['kigo.auth.method'] === 'basic'), 'the Basic request\'s spans')
    const digest = /PasswordDigest="([^"]+)"/.exec(header)![1]!
    const nonce = /Nonce="([^"]+)"/.exec(header)![1]!
    expectNoCredentials(receiver.spans, [user.api_password, user.password, header, digest, nonce, basic, basic.slice(6)])
    expect(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json'))).toBe(true)

    // Every request line of both processes carries its trace's IDs.
    const lineOf = (out: string) => out.split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as { trace_id?: string; span_id?: string })
    const gatewayLine = lineOf(gateway!.output()).find((l) => l.trace_id === caller.traceId)
    const coreLine = lineOf(core!.output()).find((l) => l.trace_id === caller.traceId)
    expect(gatewayLine?.span_id).toMatch(/^[0-9a-f]{16}$/)
    expect(coreLine?.span_id).toMatch(/^[0-9a-f]{16}$/)
    expect(coreLine?.span_id).not.toBe(gatewayLine?.span_id)

    // The latency histograms name the trace of a request in their buckets (exemplars), in
    // OpenMetrics, which Prometheus stores and Grafana links to the trace.
    const gatewayMetrics = await fetch(`${adminUrl}/metrics`)
    expect(gatewayMetrics.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/)
    const gatewayText = await gatewayMetrics.text()
    expect(gatewayText.trimEnd().endsWith('# EOF')).toBe(true)
    expect(gatewayText).toMatch(new RegExp(`^kigo_upstream_duration_seconds_bucket\\{[^}]*route="statuses/update"[^}]*\\} \\d+ # \\{trace_id="[0-9a-f]{32}"\\} [0-9.e-]+ \\d+(\\.\\d+)?$`, 'm'))
    expect(gatewayText).toMatch(/^kigo_auth_requests_total\{/m)
    const coreText = await (await fetch(coreMetricsUrl)).text()
    expect(coreText).toMatch(/^kigo_core_request_duration_seconds_bucket\{[^}]*\} \d+ # \{trace_id="[0-9a-f]{32}"\} /m)
    // The WSSE write was the only WSSE request: its authentication's bucket names its trace.
    expect(gatewayText).toMatch(new RegExp(`^kigo_auth_duration_seconds_bucket\\{[^}]*method="wsse"[^}]*\\} 1 # \\{trace_id="${caller.traceId}"\\} `, 'm'))
  }, 60_000)

  it('a traceparent sent straight to the core is trace context only: no identity, and a signed request\'s signature still holds', async () => {
    const caller = callerContext()
    const corePort = new URL(env.KIGO_CORE_URL!).port
    const res = await fetch(`http://127.0.0.1:${corePort}/api/statuses/update.json`, {
      method: 'POST',
      headers: { traceparent: caller.traceparent, 'x-kigo-user': 'tracy', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=forged',
    })
    // Unsigned identity headers make no user, whatever trace context comes with them.
    expect(res.status).toBe(401)
  })
})

describe('traces in embedded mode (one process, PGlite)', () => {
  let receiver: OtlpReceiver
  let dir: string
  let app: Started | undefined
  let url: string
  let env: Record<string, string>
  let adminUrl: string

  beforeAll(async () => {
    receiver = await OtlpReceiver.start()
    dir = embeddedDataDir('traces-embedded')
    const s = await stackEnv(dir, { KIGO_GATEWAY_BIND: '127.0.0.1' })
    // No OTEL_TRACES_EXPORTER: an OTLP endpoint alone turns tracing on.
    env = { ...s.env, ...otlpEnv(receiver, { KIGO_TRACE_CALLER_CONTEXT: 'continue' }) }
    url = `http://localhost:${s.gatewayPort}`
    adminUrl = `http://127.0.0.1:${s.adminPort}`
    app = await startApp('embedded', env, `http://127.0.0.1:${s.gatewayPort}/readyz`)
  }, 200_000)

  afterAll(async () => {
    await app?.stop()
    await receiver?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('one OAuth statuses/update: the same tree, each app under its own service.name, SQL as postgresql; no oauth_signature or secret anywhere', async () => {
    await admin(adminUrl, env.KIGO_ADMIN_TOKEN!, '/admin/users', { id: 'olive' })
    const a = await admin<{ consumer_key: string; consumer_secret: string }>(adminUrl, env.KIGO_ADMIN_TOKEN!, '/admin/apps', { name: 'tracer', owner: 'olive', scopes: ['read_public', 'write_public'] })
    const t = await admin<{ token: string; token_secret: string }>(adminUrl, env.KIGO_ADMIN_TOKEN!, '/admin/tokens', { consumer: a.consumer_key, user: 'olive', scopes: ['read_public', 'write_public'] })
    const creds = { consumerKey: a.consumer_key, consumerSecret: a.consumer_secret, token: t.token, tokenSecret: t.token_secret }
    const caller = callerContext()
    const authorization = oauthAuthorization(creds, { method: 'POST', baseUri: `${url}/api/statuses/update.json`, params: [['status', 'traced hello']] })
    const res = await fetch(`${url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { authorization, traceparent: caller.traceparent, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=traced+hello',
    })
    expect(res.status).toBe(200)
    await eventually(() => receiver.trace(caller.traceId).some((s) => s.service === 'kigo-core' && s.kind === 2) && receiver.trace(caller.traceId).some((s) => s.service === 'kigo-gateway' && s.kind === 2), 'both server spans')
    await new Promise((r) => setTimeout(r, 500))
    const spans = receiver.trace(caller.traceId)
    expectSignedWriteTree(spans, caller, 'oauth')
    expect(spans.filter((s) => s.attributes['db.system'] === 'postgresql').every((s) => s.attributes['kigo.db.engine'] === 'embedded')).toBe(true)
    const signature = decodeURIComponent(/oauth_signature="([^"]+)"/.exec(authorization)![1]!)
    expectNoCredentials(receiver.spans, [authorization, signature, creds.consumerSecret, creds.tokenSecret, creds.token])
    // The readiness checks that waited for the start made no trace.
    expect(receiver.spans.filter((s) => s.kind === 2 && /healthz|readyz/.test(String(s.attributes['http.route'])))).toEqual([])
  }, 60_000)
})

describe('sampling follows OTEL_TRACES_SAMPLER, the gateway\'s own', () => {
  const withSampler = async (sampler: Record<string, string>, requests: (url: string, app: Started, adminUrl: string) => Promise<void>): Promise<OtlpReceiver> => {
    const receiver = await OtlpReceiver.start()
    const dir = embeddedDataDir('traces-sampling')
    const s = await stackEnv(dir, { KIGO_GATEWAY_BIND: '127.0.0.1', LOG_LEVEL: 'info' })
    const app = await startApp('embedded', { ...s.env, ...otlpEnv(receiver, sampler) }, `http://127.0.0.1:${s.gatewayPort}/readyz`)
    try {
      await requests(`http://localhost:${s.gatewayPort}`, app, `http://127.0.0.1:${s.adminPort}`)
    } finally {
      // Stopping exports what is buffered: after it, what the receiver holds is all there is.
      await app.stop()
      await receiver.close()
      rmSync(dir, { recursive: true, force: true })
    }
    return receiver
  }

  it('always_off: nothing is exported, though the caller asked for its trace to be sampled', async () => {
    const receiver = await withSampler({ OTEL_TRACES_SAMPLER: 'always_off' }, async (url) => {
      for (let i = 0; i < 3; i++) expect((await fetch(`${url}/api/statuses/public_timeline.json`, { headers: { traceparent: callerContext().traceparent } })).status).toBe(200)
    })
    expect(receiver.spans).toEqual([])
  }, 200_000)

  it('traceidratio 0.5: a trace whose ID falls under the ratio is exported, one above it is not', async () => {
    // The SDK's ratio sampler compares the trace ID's 32-bit words, XORed, with ratio × 2^32.
    const low = callerContext('00000000000000000000000000000001')
    const high = callerContext('ffffffff000000000000000000000001')
    // Behind a trusted proxy (KIGO_TRACE_CALLER_CONTEXT=continue), the caller's trace ID is the one sampled.
    const receiver = await withSampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5', KIGO_TRACE_CALLER_CONTEXT: 'continue' }, async (url) => {
      for (const c of [low, high]) expect((await fetch(`${url}/api/statuses/public_timeline.json`, { headers: { traceparent: c.traceparent } })).status).toBe(200)
    })
    expect(receiver.trace(low.traceId).map((s) => s.service)).toEqual(expect.arrayContaining(['kigo-gateway', 'kigo-core']))
    expect(receiver.trace(high.traceId)).toEqual([])
  }, 200_000)


  // At the edge the gateway decides what is traced (docs/security.md#trace-context-at-the-edge).
  /** The request log lines of `output`, with their trace IDs. */
  const requestLines = (output: string) => output.split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as { trace_id?: string; url?: string })
  const exemplarIds = (text: string) => [...text.matchAll(/# \{trace_id="([0-9a-f]{32})"\}/g)].map((m) => m[1]!)
  const gatewayServerSpans = (receiver: OtlpReceiver) => receiver.spans.filter((s) => s.service === 'kigo-gateway' && s.kind === 2)

  it('20 requests asking to be sampled (-01) under a 1 % sampler: a few traces at most, each the gateway\'s own with a link to the caller\'s; no caller trace ID in a log line or exemplar', async () => {
    const callers = Array.from({ length: 20 }, () => callerContext())
    let lines: Array<{ trace_id?: string }> = []
    let metrics = ''
    const receiver = await withSampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }, async (url, app, adminUrl) => {
      for (const c of callers) expect((await fetch(`${url}/api/statuses/public_timeline.json`, { headers: { traceparent: c.traceparent } })).status).toBe(200)
      metrics = await (await fetch(`${adminUrl}/metrics`)).text()
      await eventually(() => requestLines(app.output()).length >= callers.length, 'the request lines')
      lines = requestLines(app.output())
    })
    const servers = gatewayServerSpans(receiver)
    expect(servers.length).toBeLessThanOrEqual(3)
    const callerIds = new Set(callers.map((c) => c.traceId))
    for (const s of servers) {
      expect(callerIds.has(s.traceId)).toBe(false)
      expect(s.parentSpanId).toBe('')
      expect(s.links).toHaveLength(1)
      expect(callerIds.has(s.links[0]!.traceId)).toBe(true)
    }
    expect(receiver.spans.filter((s) => callerIds.has(s.traceId))).toEqual([])
    for (const l of lines) expect(callerIds.has(l.trace_id ?? '')).toBe(false)
    // Exemplars name only the traces the gateway sampled (and exported).
    const exported = new Set(receiver.spans.map((s) => s.traceId))
    for (const id of exemplarIds(metrics)) expect(exported.has(id), id).toBe(true)
  }, 200_000)

  it('writes sent with -00 (asking not to be traced) are traced by the default sampler all the same', async () => {
    const callers = Array.from({ length: 3 }, () => ({ ...callerContext(), traceparent: '' }))
    for (const c of callers) c.traceparent = `00-${c.traceId}-${c.spanId}-00`
    const receiver = await withSampler({}, async (url) => {
      for (const c of callers) expect((await fetch(`${url}/api/statuses/update.json`, { method: 'POST', headers: { traceparent: c.traceparent, 'content-type': 'application/x-www-form-urlencoded' }, body: 'status=hidden' })).status).toBe(401)
    })
    const servers = gatewayServerSpans(receiver)
    expect(servers).toHaveLength(3)
    expect(servers.map((s) => s.links[0]?.traceId).sort()).toEqual(callers.map((c) => c.traceId).sort())
  }, 200_000)
})
