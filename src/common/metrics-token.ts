// The optional bearer token of the /metrics endpoints (docs/operations.md#metrics-token):
// with KIGO_METRICS_TOKEN set, a scrape must send `Authorization: Bearer <token>`, for
// deployments that publish the operator or core metrics port. Unset, /metrics stays open,
// as on a loopback-bound port it always was.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { renderError } from './formats.js'
import { safeEqual } from './secrets.js'

export const metricsChallenge = 'Bearer realm="kigo-metrics"'

/**
 * An onRequest hook for a /metrics route: nothing when `token` is undefined; otherwise a
 * 401 with the Bearer challenge (RFC 6750 §3) unless the request carries the token,
 * compared in constant time. The scheme name is case-insensitive (RFC 9110 §11.1).
 */
export function metricsTokenHook(token: string | undefined): ((request: FastifyRequest, reply: FastifyReply, done: () => void) => void) | undefined {
  if (token === undefined || token === '') return undefined
  return (request, reply, done) => {
    const given = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1]
    if (given !== undefined && safeEqual(given, token)) return done()
    const body = renderError('json', { status: 401, code: 'unauthorized', message: 'The metrics require Authorization: Bearer <metrics token>' })
    void reply.code(401).header('www-authenticate', metricsChallenge).header('cache-control', 'no-store').type(body.contentType).send(body.body)
  }
}
