// The operator API's one error area (docs/gateway.md#the-operator-api-and-dashboard): every
// area of it (users, applications and tokens, policy, usage, audit, locks, sessions,
// OpenID Connect clients, login sites) reads a bad request body the same way and answers
// in the same JSON, never cached. An area names only what is its own: which store is away,
// and its store's refusals.
import { sendOperatorJson } from './api-errors.js'
import type { ErrorArea } from './error-answers.js'
import { ApiError, type ErrorCode, type RequestFailure } from './errors.js'

// Fastify's own 4xx about the body, with catalogue codes and plain messages.
const bodyFailures: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'invalid_json', message: 'The request body is empty but Content-Type says JSON' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'Send the request body as application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'body_too_large', message: 'The request body is too large' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'bad_request', message: 'Content-Length does not match the body' },
}

/** The operator API's reading of a framework 4xx: its status, a catalogue code, a plain message. */
export function operatorRequestError(failure: RequestFailure): ApiError {
  const known = bodyFailures[failure.reason]
  return new ApiError(failure.status, known?.code ?? 'bad_request', known?.message ?? failure.message)
}

export interface OperatorAreaOptions {
  /** The area's 503: which store is away, in the operator's words. */
  unavailable: () => ApiError
  /** The area's own refusals (a store's NotFound, Conflict) as catalogue answers. */
  known?: ErrorArea['known']
  /** The message of the log line of a 500 (default "operator API request failed"). */
  logMessage?: string
}

/** An area of the operator API: its own store's words, the shared reading of a bad request and the shared JSON. */
export function operatorErrorArea(options: OperatorAreaOptions): ErrorArea {
  return {
    ...(options.known ? { known: options.known } : {}),
    wording: { request: operatorRequestError, unavailable: options.unavailable, internalMessage: 'Internal error' },
    render: sendOperatorJson,
    logMessage: options.logMessage ?? 'operator API request failed',
  }
}
