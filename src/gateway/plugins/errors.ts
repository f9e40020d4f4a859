// The public gateway's error answers (docs/api.md#errors): the catalogue's error in the
// request's format, and the gateway's wording of the failures it classifies. The app
// registers them with the error-answers plugin (src/common/error-answers.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { errors, type ApiError, type FailureWording } from '../../common/errors.js'
import { formatOfPath, renderError } from '../../common/formats.js'
import { closeAfterAnswer } from '../../common/linger.js'
import { sendPage } from '../provider/html.js'
import { messagePage } from '../provider/pages.js'

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
export const gatewayWording: FailureWording = {
  request: (f) => {
    if (f.reason === 'URIError') return errors.badRequest('bad_request', 'The request URL is not validly percent-encoded')
    if (f.status === 413) return errors.tooLarge('body_too_large', 'The request body is too large')
    return undefined
  },
  unavailable: () => errors.unavailable(),
  internalMessage: 'Internal error',
}

/**
 * A failure on an account page (docs/gateway.md#the-oauth-provider-and-the-account-pages),
 * as a page: a 4xx says what was wrong, a 5xx only to try again (its detail is in the log).
 */
export function sendErrorPage(reply: FastifyReply, answer: ApiError, page: (title: string, message: string) => string = (title, message) => messagePage({ title, message })): FastifyReply {
  for (const [k, v] of Object.entries(answer.headers)) void reply.header(k, v)
  const failed = answer.status >= 500
  return sendPage(reply, answer.status, page(failed ? 'Try again shortly' : 'Bad request', failed ? 'kigo cannot answer right now. Try again in a moment.' : answer.message))
}
