// Deadlines on the client side of a listening app (README "Deadlines"): a head or a body
// trickled a byte at a time, or a connection that sends nothing, must not hold a
// connection forever. Node answers 408 and closes past them, when it next checks.
import type { ServerOptions } from 'node:http'
import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'

/**
 * How often Node looks for heads and requests past their deadline: a sixth of the shorter
 * deadline, at most every 5 s (so the default 30 s head deadline holds within 35 s) and at
 * least every 250 ms. Checking every second cost the gateway about 10 µs of CPU per request
 * under load, against every 5 s, in side-by-side runs (README, ninth pass).
 */
export function deadlineCheckInterval(http: Pick<Config['gateway']['http'], 'headersTimeoutMs' | 'requestTimeoutMs'>): number {
  return Math.min(5000, Math.max(250, Math.floor(Math.min(http.headersTimeoutMs, http.requestTimeoutMs) / 6)))
}

export function clientDeadlines(http: Config['gateway']['http']): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.idleTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    http: { headersTimeout: http.headersTimeoutMs, connectionsCheckingInterval: deadlineCheckInterval(http) },
  }
}
