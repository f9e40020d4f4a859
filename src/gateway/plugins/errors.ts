// The public gateway's one error handler: whatever a route throws is answered from the
// error catalogue (docs/api.md#errors) in the request's format; a 5xx's detail stays in the log.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, errors, failureResponse, type FailureWording } from '../../common/errors.js'
import { formatOfPath, renderError } from '../../common/formats.js'
import { closeAfterAnswer } from '../../common/linger.js'

/** Sends an ApiError in the request's format (docs/api.md#errors). */
export function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  const format = formatOfPath(request.url) ?? 'json'
  const callback = format === 'json' ? callbackOf(request) : undefined
  const out = renderError(format, err, callback)
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v)
  for (const [k, v] of Object.entries(out.headers)) void reply.header(k, v)
  // Answered before its body was read (refused unverified, or too large): the connection
  // closes after the answer (a lingering close), so the rest of the body is never read.
  closeAfterAnswer(request.raw, reply.raw)
  return reply.code(err.status).type(out.contentType).send(out.body)
}

function callbackOf(request: FastifyRequest): string | undefined {
  const q = request.query as Record<string, unknown> | undefined
  const cb = q?.callback
  return typeof cb === 'string' ? cb : undefined
}

/** What the public gateway's own routes throw, in the error catalogue. */
const gatewayWording: FailureWording = {
  request: (f) => {
    if (f.reason === 'URIError') return errors.badRequest('bad_request', 'The request URL is not validly percent-encoded')
    if (f.status === 413) return errors.tooLarge('body_too_large', 'The request body is too large')
    return undefined
  },
  unavailable: () => errors.unavailable(),
  internalMessage: 'Internal error',
}

async function gatewayErrors(app: FastifyInstance): Promise<void> {
  // A method no route has (TRACE, PROPFIND…): kigo's 404, not Fastify's default body.
  app.setNotFoundHandler((request, reply) => sendError(request, reply, errors.notFound()))
  app.setErrorHandler((err: Error, request, reply) => {
    const apiError = failureResponse(err, gatewayWording)
    if (apiError.status >= 500 && !(err instanceof ApiError)) request.log.error({ err }, 'gateway error')
    return sendError(request, reply, apiError)
  })
}

export default fp(gatewayErrors, { name: 'kigo-gateway-errors', fastify: '5.x' })
