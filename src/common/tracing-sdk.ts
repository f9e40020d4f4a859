// The OpenTelemetry SDK behind tracing.ts, loaded only when tracing is configured
// (docs/operations.md#traces). Each app has its own tracer provider and resource (its
// service.name), so in embedded mode the gateway's spans and the core's stay apart though
// they share the process; the context manager and the W3C propagator are the process's.
// The sampler, the batch processor and the exporter read their OTEL_* variables themselves.
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import type { FastifyInstance, FastifyPluginCallback, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isHealthCheck, pathOf } from './request-log.js'
import type { Db, Queryable, TransactionOptions } from './sql.js'
import type { AppTracing, ForwardSpan, StepAttributes, TracingSettings } from './tracing-types.js'

let processWide = false

/** The context manager (async_hooks' AsyncLocalStorage) and the W3C propagator, once per process. */
function registerProcessWide(): void {
  if (processWide) return
  processWide = true
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
}

async function exporter(settings: TracingSettings): Promise<SpanExporter> {
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
    return new OTLPTraceExporter()
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter()
}

/** What a request's server span is, for the steps and the forward made under it. */
interface ServerSpan {
  span: Span
  context: Context
}

function attributes(values: StepAttributes): Attributes {
  const out: Attributes = {}
  for (const key in values) if (values[key] !== undefined) out[key] = values[key]
  return out
}

/** An error's kind only: messages may quote what a client sent. */
function failed(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.setAttribute('error.type', err instanceof Error ? err.name : 'error')
}

/** Ends `span` when `running` settles: marked failed (and the error rethrown) on a rejection, described by `describe` on success. */
function endWhenSettled<T>(span: Span, running: Promise<T>, describe?: (result: T) => void): Promise<T> {
  return running.then(
    (result) => {
      describe?.(result)
      span.end()
      return result
    },
    (err: unknown) => {
      failed(span, err)
      span.end()
      throw err
    },
  )
}

/**
 * Whether `ctx` holds a span that records. A statement makes a span only then: neither a
 * request the sampler left out nor work outside any request (pings, flushes) pays for
 * one beyond this check. A left-out request's trace context still reaches the core
 * (forward), which then leaves it out too.
 */
function recording(ctx: Context): boolean {
  return trace.getSpan(ctx)?.isRecording() === true
}

/** Whether `ctx` holds a span the sampler left out: a step under it makes none either (a step outside any span starts its own trace). */
function leftOut(ctx: Context): boolean {
  const span = trace.getSpan(ctx)
  return span !== undefined && !span.isRecording()
}

/** The first keyword of a statement (SELECT, INSERT …), past leading comments. */
export function sqlOperation(sql: string): string {
  const m = /^\s*(?:\/\*.*?\*\/\s*)*([A-Za-z]+)/s.exec(sql)
  return m ? m[1]!.toUpperCase() : 'SQL'
}

/** The table a statement names first after FROM, INTO or UPDATE (schema-qualified), or ''. */
export function sqlTarget(sql: string): string {
  const m = /\b(?:FROM|INTO|UPDATE)\s+([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)/i.exec(sql)
  return m ? m[1]! : ''
}

export async function createAppTracing(serviceName: string, settings: TracingSettings): Promise<AppTracing> {
  registerProcessWide()
  const resource = detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'kigo' }))
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(await exporter(settings))] })
  const tracer: Tracer = provider.getTracer('kigo')
  const servers = new WeakMap<FastifyRequest, ServerSpan>()
  const { continueCaller } = settings

  /** The request's server span context, else the active one. */
  const parentOf = (request: FastifyRequest | null): Context => (request && servers.get(request)?.context) || context.active()

  const serverSpans: FastifyPluginCallback = fp(
    (app: FastifyInstance, _opts, done) => {
      app.addHook('onRequest', (request, _reply, next) => {
        // Health checks come every few seconds from every orchestrator: no trace of theirs.
        if (isHealthCheck(pathOf(request.url))) return next()
        // A caller's W3C trace context is read as trace context only. At the edge it is kept
        // as a link from a trace of the app's own, whose sampling the app's sampler decides
        // (a caller's `-01` cannot make every request traced, nor `-00` hide its writes, nor
        // its trace ID reach the log or an exemplar); continued only when told so (a proxy
        // in front that is trusted to have decided, or the gateway in front of the core).
        const given = propagation.extract(ROOT_CONTEXT, request.headers)
        const callerSpan = trace.getSpanContext(given)
        const parent = continueCaller ? given : ROOT_CONTEXT
        const span = tracer.startSpan(request.method, {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': request.method, 'url.scheme': request.protocol, 'kigo.request_id': String(request.id) },
          ...(!continueCaller && callerSpan !== undefined && isSpanContextValid(callerSpan) ? { links: [{ context: callerSpan }] } : {}),
        }, parent)
        const ctx = trace.setSpan(parent, span)
        servers.set(request, { span, context: ctx })
        context.with(ctx, next)
      })
      // The body was read outside the request's context: the handler runs in it again.
      app.addHook('preHandler', (request, _reply, next) => {
        const s = servers.get(request)
        if (s === undefined) return next()
        context.with(s.context, next)
      })
      // Ended before the app's own onResponse hooks run (the request's log line among them),
      // which run in its context, so that the line carries its IDs.
      app.addHook('onResponse', (request, reply, next) => {
        const s = servers.get(request)
        if (s === undefined) return next()
        servers.delete(request)
        const route = (request as { routeName?: string | null }).routeName ?? request.routeOptions.url
        if (route) {
          s.span.setAttribute('http.route', route)
          s.span.updateName(`${request.method} ${route}`)
        }
        s.span.setAttribute('http.response.status_code', reply.statusCode)
        if (reply.statusCode >= 500) s.span.setStatus({ code: SpanStatusCode.ERROR })
        s.span.end()
        context.with(s.context, next)
      })
      app.addHook('onRequestAbort', (request, next) => {
        const s = servers.get(request)
        if (s !== undefined) {
          servers.delete(request)
          s.span.setAttribute('kigo.client_aborted', true)
          s.span.end()
        }
        next()
      })
      done()
    },
    { name: 'kigo-server-spans', fastify: '5.x' },
  )

  const step = <T>(request: FastifyRequest | null, name: string, fn: () => Promise<T>, describe?: (result: T) => StepAttributes): Promise<T> => {
    const parent = parentOf(request)
    if (leftOut(parent)) return fn()
    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent)
    let running: Promise<T>
    try {
      running = context.with(trace.setSpan(parent, span), fn)
    } catch (err) {
      failed(span, err)
      span.end()
      throw err
    }
    return endWhenSettled(span, running, describe && ((result) => span.setAttributes(attributes(describe(result)))))
  }

  const stepSync = <T>(name: string, fn: () => T, describe?: (result: T) => StepAttributes): T =>
    leftOut(context.active()) ? fn() : tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL }, (span) => {
      try {
        const result = fn()
        if (describe) span.setAttributes(attributes(describe(result)))
        return result
      } catch (err) {
        failed(span, err)
        throw err
      } finally {
        span.end()
      }
    })

  const forward = (request: FastifyRequest, method: string): ForwardSpan => {
    const parent = parentOf(request)
    const span = tracer.startSpan(`${method} core`, { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'kigo.request_id': String(request.id) } }, parent)
    const ctx = trace.setSpan(parent, span)
    return {
      headers() {
        const carrier: Record<string, string> = {}
        propagation.inject(ctx, carrier)
        return carrier
      },
      end(status) {
        if (typeof status === 'number') {
          span.setAttribute('http.response.status_code', status)
          if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR })
        } else failed(span, status)
        span.end()
      },
    }
  }

  /** A statement's span, only inside a sampled trace: pings, refreshes, flushes and the statements of a request left out start none. */
  const statement = <T>(engine: Db['engine'], sql: string, run: () => Promise<T>): Promise<T> => {
    const parent = context.active()
    if (!recording(parent)) return run()
    const operation = sqlOperation(sql)
    const target = sqlTarget(sql)
    // The statement's text only: values are parameters ($1 …), never part of it.
    const span = tracer.startSpan(target === '' ? operation : `${operation} ${target}`, {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': sql, 'db.statement': sql, 'kigo.db.engine': engine, ...(target === '' ? {} : { 'db.collection.name': target }) },
    }, parent)
    return run().then(
      (result) => {
        span.end()
        return result
      },
      (err: unknown) => {
        failed(span, err)
        const code = (err as { code?: unknown } | null)?.code
        if (typeof code === 'string') span.setAttribute('db.response.status_code', code)
        span.end()
        throw err
      },
    )
  }

  const db = (inner: Db): Db => {
    const traced = (q: Queryable): Queryable => ({ query: (sql, params) => statement(inner.engine, sql, () => q.query(sql, params)) })
    const wrapped: Db = {
      engine: inner.engine,
      query: (sql, params) => statement(inner.engine, sql, () => inner.query(sql, params)),
      transaction: <T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions) => {
        const parent = context.active()
        if (!recording(parent)) return inner.transaction(fn, options)
        const span = tracer.startSpan('transaction', { kind: SpanKind.INTERNAL, attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'kigo.db.engine': inner.engine } }, parent)
        return endWhenSettled(span, context.with(trace.setSpan(parent, span), () => inner.transaction((tx) => fn(traced(tx)), options)))
      },
      ping: () => inner.ping(),
      close: () => inner.close(),
    }
    if (inner.poolStats) wrapped.poolStats = () => inner.poolStats!()
    return wrapped
  }

  return {
    serviceName,
    serverSpans,
    step,
    stepSync,
    forward,
    db,
    sampledTraceId: () => {
      const c = trace.getSpan(context.active())?.spanContext()
      return c !== undefined && (c.traceFlags & TraceFlags.SAMPLED) !== 0 ? c.traceId : undefined
    },
    logMixin: (): Record<string, string> => {
      const span = trace.getSpan(context.active())
      if (span === undefined) return {}
      const c = span.spanContext()
      return { trace_id: c.traceId, span_id: c.spanId }
    },
    shutdown: () => provider.shutdown(),
  }
}
