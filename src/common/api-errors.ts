// Renderers of the error catalogue (docs/api.md#errors) for the error-answers plugin
// (error-answers.ts): the public API's, in the request's format, and the operator API's JSON.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorRenderer } from './error-answers.js'
import type { ApiError } from './errors.js'
import { formatOfPath, renderError } from './formats.js'
import { closeAfterAnswer } from './linger.js'

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

/** Writes an answer as the operator API's JSON (docs/gateway.md#the-operator-api-and-dashboard), never cached. */
export const sendOperatorJson: ErrorRenderer = (_request, reply, answer) =>
  reply.code(answer.status).headers(answer.headers).header('cache-control', 'no-store')
    .send({ error: { status: answer.status, code: answer.code, message: answer.message } })
