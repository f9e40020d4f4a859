// OpenTelemetry traces (docs/operations.md#traces), off unless an exporter is configured by
// the standard OTEL_* variables. This module only reads those variables and says what an
// app's tracing offers: the OpenTelemetry SDK is loaded (tracing-sdk.ts) when tracing is
// on and never otherwise, and an app without tracing registers no hook and wraps nothing,
// so tracing off costs a request nothing.
import type { IncomingHttpHeaders } from 'node:http'
import type { AppTracing, TracedApp, TracingSettings } from './tracing-types.js'

export type { AppTracing, ForwardSpan, StepAttributes, TracedApp, TracingSettings } from './tracing-types.js'

export class TracingConfigError extends Error {
  override name = 'TracingConfigError'
}

type Env = Record<string, string | undefined>

/** The OTEL_* variables kigo's tracing reads (the SDK reads further ones: OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES …). */
export const tracingVariables = [
  'OTEL_SDK_DISABLED',
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SERVICE_NAME',
  'KIGO_TRACE_CALLER_CONTEXT',
] as const

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== ''

/**
 * Tracing is on when OTEL_TRACES_EXPORTER names `otlp`, or, when it is unset, when an OTLP
 * endpoint is given (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
 * OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off. Anything kigo cannot
 * export to (another exporter, the gRPC protocol) is refused at start, not ignored.
 */
export function tracingSettings(env: Env = process.env): TracingSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null
  const exporters = present(env.OTEL_TRACES_EXPORTER)
    ? env.OTEL_TRACES_EXPORTER.split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '')
    : null
  if (exporters !== null) {
    const other = exporters.find((e) => e !== 'otlp' && e !== 'none')
    if (other !== undefined) throw new TracingConfigError(`OTEL_TRACES_EXPORTER=${other} is not supported; use otlp (or none)`)
    if (!exporters.includes('otlp')) return null
  } else if (!present(env.OTEL_EXPORTER_OTLP_ENDPOINT) && !present(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) {
    return null
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim().toLowerCase()
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new TracingConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported; use http/protobuf or http/json`)
  }
  const caller = (env.KIGO_TRACE_CALLER_CONTEXT ?? 'link').trim().toLowerCase()
  if (caller !== 'link' && caller !== 'continue') throw new TracingConfigError(`KIGO_TRACE_CALLER_CONTEXT=${caller} is not supported; use link (the default) or continue`)
  return { protocol, serviceName: env.OTEL_SERVICE_NAME?.trim() ?? '', continueCaller: caller === 'continue' }
}

/**
 * An app's `service.name`: kigo-gateway and kigo-core, or OTEL_SERVICE_NAME when given. In
 * embedded mode one process runs both apps, each with its own tracer and resource, and a
 * given OTEL_SERVICE_NAME is their common prefix (`<name>-gateway`, `<name>-core`), so the
 * two stay apart in both modes.
 */
export function serviceName(app: TracedApp, embedded: boolean, given: string): string {
  if (given === '') return `kigo-${app}`
  return embedded ? `${given}-${app}` : given
}

/** Strips a forwarded request's inbound trace context so only the gateway's own reaches the core. */
export function withoutTraceContext(headers: IncomingHttpHeaders): void {
  delete headers.traceparent
  delete headers.tracestate
}

/**
 * The app's tracing, or undefined when none is configured; the SDK is loaded only in the
 * first case. Throws TracingConfigError for a configuration kigo cannot honour.
 */
export async function startTracing(app: TracedApp, opts: { embedded: boolean; env?: Env }): Promise<AppTracing | undefined> {
  const settings = tracingSettings(opts.env ?? process.env)
  if (settings === null) return undefined
  const { createAppTracing } = await import('./tracing-sdk.js')
  // The core is reached only through the gateway, which sends its own context: the core
  // continues it. The gateway is the edge: it continues a caller's only when told to.
  return createAppTracing(serviceName(app, opts.embedded, settings.serviceName), app === 'core' ? { ...settings, continueCaller: true } : settings)
}
