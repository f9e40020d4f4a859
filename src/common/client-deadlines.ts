// Deadlines on the client side of a listening app (README "Deadlines"): a head or a body
// trickled a byte at a time, or a connection that sends nothing, must not hold a
// connection forever. Node answers 408 and closes past them; checked every second.
import type { ServerOptions } from 'node:http'
import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'

export function clientDeadlines(http: Config['gateway']['http']): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.idleTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    http: { headersTimeout: http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
  }
}
