// Renderers of the error catalogue (docs/api.md#errors) for the error-answers plugin
// (error-answers.ts): the public API's, in the request's format, and the operator API's JSON.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorRenderer } from './error-answers.js'
import type { ApiError } from './errors.js'
import { formatOfPath, renderError, type Format } from './formats.js'
import { closeAfterAnswer } from './linger.js'

/**
 * Writes an ApiError in `format` (docs/api.md#errors): the error's own headers (such as
 * Retry-After or WWW-Authenticate), then the format's. The one writer of both apps: the
 * gateway's `sendError` below and the core's (src/core/routes/context.ts) differ only in
 * how they know the request's format.
 */
export function writeApiError(reply: FastifyReply, err: ApiError, format: Format, callback: string | undefined): FastifyReply {
  const out = renderError(format, err, callback)
  return reply.code(err.status).headers({ ...err.headers, ...out.headers }).type(out.contentType).send(out.body)
}

/** Sends an ApiError in the format the request's path names, JSON by default (the gateway's answers). */
export function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  const format = formatOfPath(request.url) ?? 'json'
  // Answered before its body was read (refused unverified, or too large): the connection
  // closes after the answer (a lingering close), so the rest of the body is never read.
  closeAfterAnswer(request.raw, reply.raw)
  return writeApiError(reply, err, format, format === 'json' ? callbackOf(request) : undefined)
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
