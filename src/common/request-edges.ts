// Requests both apps refuse at the edge, before any route sees them
// (docs/security.md#request-edges): a head Node accepts but that two readers could read
// differently, and the framework's own failures, answered in kigo's error format rather
// than Fastify's default bodies (which echo the request's URL).
import type { Duplex } from 'node:stream'
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { ApiError, errors } from './errors.js'

/**
 * True when the head carries more than one Host field. Node keeps the first and drops the
 * others, so a proxy in front that keeps the last would address another host than the one
 * kigo checks: RFC 9112 §3.2 makes such a request a 400.
 */
export function repeatedHost(rawHeaders: readonly string[]): boolean {
  let seen = false
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue
    if (seen) return true
    seen = true
  }
  return false
}

export const repeatedHostError = (): ApiError => errors.badRequest('bad_request', 'Send one Host header, not several')

/**
 * Fastify's `frameworkErrors`: a URL its router cannot decode (FST_ERR_BAD_URL) and the
 * router's other failures, answered by `send` in the request's format. The message never
 * repeats the URL.
 */
export function frameworkErrors(send: (request: FastifyRequest, reply: FastifyReply, err: ApiError) => unknown): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (err, request, reply) => {
    const code = (err as { code?: string }).code
    const apiError = code === 'FST_ERR_BAD_URL'
      ? errors.badRequest('bad_encoding', 'Malformed percent-encoding in the path')
      : code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? errors.notFound()
        : errors.badRequest('bad_request', 'The request could not be routed')
    send(request, reply, apiError)
  }
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused (an unknown method such
 * as `FOO`, a malformed head, a head too large, a request past its deadline) is answered
 * in kigo's JSON error format (no request was read, so no path to take a format from)
 * instead of Fastify's own body, and the connection closed, as Node and Fastify do.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, reason, message] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? [408, 'Request Timeout', 'The request did not arrive in time']
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request head is too large']
      : [400, 'Bad Request', 'The request could not be read as HTTP/1.1']
  const body = JSON.stringify({ error: { status, code: 'bad_request', message } })
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}
