// One line per request (docs/gateway.md#metrics), for every app of kigo: each app says what
// its line holds and what it counts as a request is answered; this plugin writes the line
// at info (health checks at debug) and adds one onResponse hook for both, or none when
// there is nothing to write or count.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export interface RequestLogOptions {
  /** The fields of the request's line; never a credential (the request ID comes from request.log). */
  line: (request: FastifyRequest, reply: FastifyReply) => Record<string, unknown>
  /** Counts the answered request (metrics), whether or not lines are written. */
  observe?: (request: FastifyRequest, reply: FastifyReply) => void
}

/** The path of a request URL, without its query. */
export function pathOf(url: string): string {
  const q = url.indexOf('?')
  return q === -1 ? url : url.slice(0, q)
}

/** Health checks come every few seconds from each orchestrator and balancer: logged at debug. */
export const isHealthCheck = (path: string): boolean => path === '/healthz' || path === '/readyz'

async function requestLog(app: FastifyInstance, { line, observe }: RequestLogOptions): Promise<void> {
  const logger = app.log as { isLevelEnabled?: (level: string) => boolean }
  const logRequests = typeof logger.isLevelEnabled === 'function' && logger.isLevelEnabled('info')
  if (!logRequests && observe === undefined) return
  // Callback-style, and nothing it need not do: it runs on every request.
  app.addHook('onResponse', (request, reply, done) => {
    observe?.(request, reply)
    if (logRequests) request.log[isHealthCheck(pathOf(request.raw.url ?? '')) ? 'debug' : 'info'](line(request, reply), 'request')
    done()
  })
}

export default fp(requestLog, { name: 'kigo-request-lines', fastify: '5.x' })
