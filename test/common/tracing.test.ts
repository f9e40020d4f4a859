// What turns tracing on, and what is refused (docs/operations.md#traces); the protobuf
// protocol through the SDK itself.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { serviceName, startTracing, tracingSettings, TracingConfigError } from '../../src/common/tracing.js'
import { OtlpReceiver } from '../helpers/otlp-receiver.js'

describe('tracingSettings', () => {
  it('is off with nothing configured, with OTEL_TRACES_EXPORTER=none and with OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettings({})).toBeNull()
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBeNull()
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull()
  })

  it('is on with OTEL_TRACES_EXPORTER=otlp, or with an OTLP endpoint alone; protobuf unless http/json is asked for', () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ protocol: 'http/protobuf', serviceName: '', continueCaller: false })
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol).toBe('http/json')
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol).toBe('http/protobuf')
  })

  it('links a caller\'s trace context unless KIGO_TRACE_CALLER_CONTEXT=continue; anything else is refused at start', () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', KIGO_TRACE_CALLER_CONTEXT: 'continue' })?.continueCaller).toBe(true)
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', KIGO_TRACE_CALLER_CONTEXT: 'link' })?.continueCaller).toBe(false)
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', KIGO_TRACE_CALLER_CONTEXT: 'yes' })).toThrow(/KIGO_TRACE_CALLER_CONTEXT=yes/)
  })

  it('refuses at start what it cannot export to, naming the variable', () => {
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(TracingConfigError)
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc/)
  })
})

describe('serviceName', () => {
  it('tells the gateway from the core in both modes', () => {
    expect([serviceName('gateway', false, ''), serviceName('core', true, '')]).toEqual(['kigo-gateway', 'kigo-core'])
    expect([serviceName('gateway', false, 'edge'), serviceName('core', false, 'store')]).toEqual(['edge', 'store'])
    expect([serviceName('gateway', true, 'kigo-dev'), serviceName('core', true, 'kigo-dev')]).toEqual(['kigo-dev-gateway', 'kigo-dev-core'])
  })
})

it('http/protobuf: spans go to <endpoint>/v1/traces as application/x-protobuf', async () => {
  const receiver = await OtlpReceiver.start()
  try {
    const tracing = await startTracing('core', { embedded: false, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } })
    expect(tracing?.serviceName).toBe('kigo-core')
    // The exporter reads the process's own environment for its endpoint.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    const t = await startTracing('core', { embedded: false })
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
    await t!.step(null, 'one step', () => Promise.resolve(1), (n) => ({ n }))
    await t!.shutdown()
    await tracing!.shutdown()
    expect(receiver.requests).toEqual([{ path: '/v1/traces', contentType: 'application/x-protobuf' }])
  } finally {
    await receiver.close()
  }
})

it('loads the OpenTelemetry SDK from one module, which only startTracing imports, and only when tracing is on', () => {
  const root = new URL('../../src/', import.meta.url).pathname
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'))
  const importing = files.filter((f) => /from '@opentelemetry\//.test(readFileSync(join(root, f), 'utf8')))
  expect(importing).toEqual(['common/tracing-sdk.ts'])
  const naming = files.filter((f) => /tracing-sdk\.js/.test(readFileSync(join(root, f), 'utf8')))
  expect(naming).toEqual(['common/tracing.ts'])
  expect(readFileSync(join(root, 'common/tracing.ts'), 'utf8')).toMatch(/await import\('\.\/tracing-sdk\.js'\)/)
})
