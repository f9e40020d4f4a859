// The core's one line per request and its request metrics (src/core/metrics.ts), written by
// the request-log plugin every app shares (src/common/request-log.ts).
import type { RequestLogOptions } from '../../common/request-log.js'
import { pathOf } from '../../common/request-log.js'
import type { CoreMetrics } from '../metrics.js'
import { contextOf, routeOf } from '../routes/context.js'

export function coreRequestLog(metrics: CoreMetrics | undefined): RequestLogOptions {
  return {
    // Label values are bounded: the route table's operation names (as the gateway labels
    // them, so the two can be joined), other routes' patterns, methods, status classes.
    ...(metrics
      ? {
          observe: (request, reply) => {
            const route = routeOf(request)
            const operation = route.operation?.name ?? route.url ?? 'unmatched'
            const statusClass = `${Math.floor(reply.statusCode / 100)}xx`
            metrics.requests.series(operation, request.method, statusClass).inc()
            metrics.duration.series(operation).observe(reply.elapsedTime / 1000)
          },
        } satisfies Pick<RequestLogOptions, 'observe'>
      : {}),
    line: (request, reply) => ({
      method: request.method,
      path: pathOf(request.raw.url ?? ''),
      status: reply.statusCode,
      user: contextOf(request).identity?.user,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    }),
  }
}
