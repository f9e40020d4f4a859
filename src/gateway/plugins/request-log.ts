// One line and the metrics per request (docs/gateway.md#metrics): the authentication decision, the route
// and the time spent upstream, recorded on the request by the plugins that decide them.
// The line itself is written by the request-log plugin every app shares (src/common/request-log.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import requestLines from '../../common/request-log.js'
import type { AuthDecision } from '../auth/authenticate.js'
import type { GatewayMetrics } from '../metrics/metrics.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authentication decision, once made (null: none was needed or made). */
    auth: AuthDecision | null
    /** The route-table name the request was handled as (null: the gateway's own). */
    routeName: string | null
    /** When the request was handed to the core (the upstream histogram); null if it was not. */
    upstreamStartedAt: bigint | null
  }
}

export interface RequestLogOptions {
  metrics: GatewayMetrics
}

const statusClasses = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx']
const statusClass = (status: number): string => statusClasses[Math.floor(status / 100)] ?? 'other'

async function requestLog(app: FastifyInstance, { metrics }: RequestLogOptions): Promise<void> {
  // Declared with null so that every request object has the same shape from the start.
  app.decorateRequest('auth', null)
  app.decorateRequest('routeName', null)
  app.decorateRequest('upstreamStartedAt', null)

  await app.register(requestLines, {
    observe: (request, reply) => {
      const auth = request.auth
      const route = request.routeName ?? 'gateway'
      if (auth) metrics.authRequests.series(auth.method, auth.outcome, route).inc()
      if (request.upstreamStartedAt !== null) {
        metrics.upstreamDuration.series(route, statusClass(reply.statusCode)).observe(Number(process.hrtime.bigint() - request.upstreamStartedAt) / 1e9)
      }
    },
    line: (request, reply) => {
      const auth = request.auth
      return {
        route: request.routeName ?? 'gateway',
        method: request.method,
        auth: auth?.method ?? 'none',
        user: auth?.ok ? auth.identity?.user : auth?.user,
        consumer: auth?.ok ? auth.identity?.consumer || undefined : undefined,
        outcome: auth?.outcome,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 1000) / 1000,
      }
    },
  })
}

export default fp(requestLog, { name: 'kigo-request-log', fastify: '5.x' })
