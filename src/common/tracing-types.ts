// What an app's tracing offers when it is on (docs/operations.md#traces): the types
// tracing.ts (the switch) and tracing-sdk.ts (the SDK behind it) share.
import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import type { Db } from './sql.js'

export type TracedApp = 'gateway' | 'core'

/** What tracing is configured to do, read from the environment (null: off). */
export interface TracingSettings {
  /** OTLP over HTTP: JSON or protobuf. */
  protocol: 'http/json' | 'http/protobuf'
  /** OTEL_SERVICE_NAME as given ('' when unset). */
  serviceName: string
  /**
   * Whether a caller's W3C trace context is continued (its trace ID and sampled flag kept)
   * or only linked from a trace of the app's own (KIGO_TRACE_CALLER_CONTEXT).
   */
  continueCaller: boolean
}

/** A client span around one forward to the core. */
export interface ForwardSpan {
  /** The W3C trace context headers the core is sent (traceparent, and tracestate when there is one). */
  headers(): Record<string, string>
  /** The core answered with `status`, or no answer came (`err`). */
  end(status: number | Error): void
}

/** The outcome attributes of a finished step: simple values, never a credential. */
export type StepAttributes = Record<string, string | number | boolean | undefined>

/** One app's tracing, when on. */
export interface AppTracing {
  readonly serviceName: string
  /** Server spans: a Fastify plugin to register before every other hook of the app. */
  readonly serverSpans: FastifyPluginCallback
  /**
   * Runs `fn` in a child span of the request's server span (or of the active span) named
   * `name`; `describe` turns its result into attributes. A rejection marks the span failed.
   */
  readonly step: <T>(request: FastifyRequest | null, name: string, fn: () => Promise<T>, describe?: (result: T) => StepAttributes) => Promise<T>
  /** The same for a synchronous step, in the active span. */
  readonly stepSync: <T>(name: string, fn: () => T, describe?: (result: T) => StepAttributes) => T
  /** A client span for the forward of `request` to the core, child of its server span. */
  readonly forward: (request: FastifyRequest, method: string) => ForwardSpan
  /** The database with a span around each statement made inside a trace. */
  readonly db: (db: Db) => Db
  /** The active trace's ID when it is sampled (a histogram's exemplar), else undefined. */
  readonly sampledTraceId: () => string | undefined
  /** pino's mixin: the active span's trace_id and span_id on every line written inside one. */
  readonly logMixin: () => Record<string, string>
  /** Exports what is still buffered and stops. */
  readonly shutdown: () => Promise<void>
}
