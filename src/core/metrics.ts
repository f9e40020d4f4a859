// The core's own Prometheus metrics (served on a loopback port by server.ts, beside the
// public port, so they never reach the gateway's clients): requests and latency per
// operation, content-store failures, pool use, process metrics. Labels stay bounded: the
// operation is the route table's name (statuses/show), or a page's route pattern, never a raw path.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { routeOf } from './routes/context.js'
import { LabelledCounter, LabelledHistogram } from '../common/labelled-metrics.js'

export interface CoreMetrics {
  registry: Registry
  /** Per request (labelled-metrics.ts): its series are counted without prom-client's label hashing. */
  requests: LabelledCounter<'operation' | 'method' | 'status_class'>
  duration: LabelledHistogram<'operation'>
  storeErrors: Counter<'operation'>
}

export function createCoreMetrics(options: { processMetrics?: boolean; poolStats?: () => { total: number; idle: number; waiting: number; max: number } | undefined } = {}): CoreMetrics {
  const registry = new Registry()
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const storeErrors = new Counter({
    name: 'kigo_core_store_errors_total',
    help: 'Content-store calls that failed (answered store_unavailable while the store is away, internal_error otherwise)',
    labelNames: ['operation'],
    registers,
  })
  // Exported at zero from start-up, so that rate() sees the first failure.
  storeErrors.inc({ operation: 'any' }, 0)
  const pool = (name: string, help: string, pick: (s: { total: number; idle: number; waiting: number; max: number }) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const stats = options.poolStats?.()
        this.set(stats ? pick(stats) : 0)
      },
    })
  pool('kigo_core_store_pool_connections', 'Open connections of the PostgreSQL pool (0 for the embedded engine)', (s) => s.total)
  pool('kigo_core_store_pool_idle', 'Idle connections of the PostgreSQL pool', (s) => s.idle)
  pool('kigo_core_store_pool_waiting', 'Queries waiting for a connection of the PostgreSQL pool', (s) => s.waiting)
  pool('kigo_core_store_pool_max', 'Size limit of the PostgreSQL pool', (s) => s.max)
  return {
    registry,
    requests: new LabelledCounter({
      name: 'kigo_core_requests_total',
      help: 'Requests answered by the core, by operation (the route table name, as the gateway has it; a page: its route pattern), method and status class',
      labelNames: ['operation', 'method', 'status_class'],
      registers,
    }),
    duration: new LabelledHistogram({
      name: 'kigo_core_request_duration_seconds',
      help: 'Time the core took to answer, by operation (the route table name; a page: its route pattern)',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    storeErrors,
  }
}

/**
 * Counts an answered request (the request-log plugin's observe). Label values are bounded:
 * the route table's operation names (as the gateway labels them, so the two can be joined),
 * other routes' patterns, methods, status classes.
 */
export function observeRequest(metrics: CoreMetrics): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    const route = routeOf(request)
    const operation = route.operation?.name ?? route.url ?? 'unmatched'
    const statusClass = `${Math.floor(reply.statusCode / 100)}xx`
    metrics.requests.series(operation, request.method, statusClass).inc()
    metrics.duration.series(operation).observe(reply.elapsedTime / 1000)
  }
}
