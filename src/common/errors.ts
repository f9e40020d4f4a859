// The error catalogue (docs/api.md#errors): one stable code per failure, its HTTP status, and
// optional headers (challenges, Retry-After). Routes throw ApiError; one handler per app
// (error-answers.ts) renders it in the request's format. Which failure is the client's
// (4xx), a dependency's or a capacity's (503) or kigo's own (500) is decided once, by
// classifyFailure below: a module that meets an outage throws a named failure (an
// Unavailable, or an error named in unavailableNames), never a 503 of its own
// (test/architecture/errors.test.ts, docs/operations.md#error-answers).

/**
 * Every code kigo sends in an error body (and, for OAuth, as oauth_problem): clients
 * branch on these, so a new one is added here, on purpose, never made up at a call site.
 */
export const errorCodes = [
  // the request itself
  'bad_request',
  'bad_path',
  'bad_encoding',
  'bad_callback',
  'invalid_parameter',
  'invalid_json',
  'invalid_callback',
  'invalid_redirect_uri',
  'invalid_keyword',
  'invalid_source',
  'invalid_title',
  'invalid_folder',
  'invalid_body_formats',
  'conflicting_id',
  'duplicate_parameter',
  'parameter_too_large',
  'malformed_body',
  'unknown_deployment',
  'method_not_allowed',
  'unsupported_media_type',
  'unsupported_charset',
  'body_too_large',
  'file_too_large',
  'too_many_files',
  'too_many_parts',
  'request_timeout',
  'file_required',
  'not_an_image',
  'status_required',
  'status_too_long',
  'status_and_file',
  'word_required',
  'keyword_too_long',
  'source_too_long',
  'title_too_long',
  'folder_too_long',
  'cannot_follow_self',
  // credentials and rights
  'unauthorized',
  'authentication_required',
  'invalid_identity',
  'multiple_credentials',
  'malformed_credentials',
  'unsupported_credentials',
  'bad_credentials',
  'additional_authorization_required',
  'scope_not_registered',
  'not_allowed',
  'method_retired',
  'method_retired_temporarily',
  'registration_closed',
  'method_not_accepted',
  'stale',
  'replay',
  'too_many_requests',
  'account_locked',
  // OAuth 2.0 Bearer tokens (RFC 6750 §3.1), sent as the code and as the challenge's error
  'invalid_request',
  'invalid_token',
  'insufficient_scope',
  // OAuth problems (OAuth Problem Reporting), sent as the code and as oauth_problem
  'parameter_absent',
  'parameter_rejected',
  'version_rejected',
  'signature_method_rejected',
  'signature_invalid',
  'timestamp_refused',
  'nonce_used',
  'consumer_key_unknown',
  'token_rejected',
  'token_revoked',
  'token_expired',
  'permission_denied',
  'permission_unknown',
  // things that do not exist, or already do
  'not_found',
  'user_not_found',
  'entry_not_found',
  'keyword_not_found',
  'photo_not_found',
  'token_not_found',
  'consumer_not_found',
  'client_not_found',
  'reply_target_not_found',
  'user_exists',
  'conflict',
  'precondition_failed',
  // dependencies and kigo itself
  'store_unavailable',
  'replay_cache_unavailable',
  'upstream_unavailable',
  'service_unavailable',
  'uploads_busy',
  'bad_gateway',
  'gateway_timeout',
  'internal_error',
] as const

export type ErrorCode = (typeof errorCodes)[number]

type Headers = Record<string, string | string[]>

export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Headers = {},
  ) {
    super(message)
  }
}

export const errors = {
  badRequest: (code: ErrorCode, message: string) => new ApiError(400, code, message),
  unauthorized: (code: ErrorCode, message: string, headers: Headers = {}) => new ApiError(401, code, message, headers),
  forbidden: (code: ErrorCode, message: string, headers: Headers = {}) => new ApiError(403, code, message, headers),
  notFound: (code: ErrorCode = 'not_found', message = 'No such resource') => new ApiError(404, code, message),
  methodNotAllowed: (allow: string[]) =>
    new ApiError(405, 'method_not_allowed', `Method not allowed; use ${allow.join(', ')}`, { allow: allow.join(', ') }),
  requestTimeout: (message: string) => new ApiError(408, 'request_timeout', message),
  tooLarge: (code: ErrorCode, message: string) => new ApiError(413, code, message),
  unsupportedMedia: (code: ErrorCode, message: string) => new ApiError(415, code, message),
  tooManyRequests: (retryAfterSeconds: number, message = 'Too many failed attempts; try again later') =>
    new ApiError(429, 'too_many_requests', message, { 'retry-after': String(retryAfterSeconds) }),
  badGateway: (message = 'The upstream service failed') => new ApiError(502, 'bad_gateway', message),
  unavailable: (code: ErrorCode = 'service_unavailable', message = 'A dependency is unavailable; try again shortly', retryAfterSeconds = 5) =>
    new ApiError(503, code, message, { 'retry-after': String(retryAfterSeconds) }),
  gatewayTimeout: (message = 'The upstream service did not answer in time') => new ApiError(504, 'gateway_timeout', message),
}

// ---- failures to responses ---------------------------------------------------------------

/**
 * A failure named where it is met: something the request needs is away or full for now
 * (the core unreachable, too many bodies or uploads held, the store not ready). The module
 * that throws it says what (its code, its words, how long to wait); classifyFailure
 * decides the answer: 503 with Retry-After, as for any dependency away. Each module names
 * its own subclass.
 */
export class Unavailable extends Error {
  override name = 'Unavailable'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message)
  }
}

/** A 4xx the framework (or the URL decoder) raised about the request, not yet in the catalogue. */
export interface RequestFailure {
  kind: 'request'
  status: number
  /** Fastify's error code (FST_ERR_…), or 'URIError' for a URL that cannot be decoded. */
  reason: string
  message: string
  /** True for a failed schema validation. */
  validation: boolean
}

/**
 * What a thrown value means for the answer:
 * - `answered`: a route's own refusal, already in the catalogue;
 * - `request`: the request is at fault (a 4xx raised by Fastify or the URL decoder);
 * - `unavailable`: a dependency is away or did not answer in time (PostgreSQL, Redis,
 *   a deadline), or a capacity is full for now (`named`: an Unavailable, with its own
 *   code and words): 503 with Retry-After, so that clients retry (docs/operations.md#dependability);
 * - `fault`: anything else is kigo's own failure: 500, its detail only in the log.
 */
export type Failure =
  | { kind: 'answered'; error: ApiError }
  | RequestFailure
  | { kind: 'unavailable'; named?: Unavailable }
  | { kind: 'fault' }

/** Names of the errors that say a dependency is away, whatever their message (a deadline, the replay cache, the shared throttle, the SMTP server). */
const unavailableNames = new Set(['DeadlineExceeded', 'ReplayCacheUnavailable', 'ThrottleUnavailable', 'MailUnavailable'])

// Connection-level failures: Node's socket errors and the SQLSTATEs of a server going away
// (57P0x shutting down, 53300 too many connections; class 08 below). 57014 (a statement
// deadline) is an answer that did not come in time.
const connectionCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300'])

/**
 * True when an error of PostgreSQL, PGlite or Redis (or a deadline) says the dependency is
 * away (no connection, a deadline passed, the server shutting down), false for an answer
 * about the statement itself (a unique violation, a bad value): only the former is an outage.
 */
export function isConnectionFailure(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false
  if (unavailableNames.has((err as { name?: string }).name as string)) return true
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (connectionCodes.has(code) || code.startsWith('08') || code === '57014')) return true
  const message = err instanceof Error ? err.message : ''
  // node-postgres's own Client (no pool around it) says only this when its connect deadline passes.
  if (message === 'timeout expired') return true
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connect ECONNREFUSED|PGlite is closed|Client has encountered a connection error|Connection ended unexpectedly|connection timeout|Stream isn't writeable|Connection is closed|Command timed out/i.test(message)
}

export function classifyFailure(err: unknown): Failure {
  if (err instanceof ApiError) return { kind: 'answered', error: err }
  // Before the status check: Fastify marks an error a body stream failed with as a 400.
  if (err instanceof Unavailable) return { kind: 'unavailable', named: err }
  if (err instanceof URIError) return { kind: 'request', status: 400, reason: 'URIError', message: err.message, validation: false }
  const e = (err ?? {}) as { statusCode?: unknown; code?: unknown; message?: unknown; validation?: unknown; name?: unknown }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { kind: 'request', status: e.statusCode, reason: typeof e.code === 'string' ? e.code : '', message: String(e.message), validation: e.validation !== undefined && e.validation !== null }
  }
  if (isConnectionFailure(err)) return { kind: 'unavailable' }
  return { kind: 'fault' }
}

/**
 * The status of a readiness answer (/readyz, whose body lists the dependencies): 503 while
 * one is away, as any request that needs it is answered.
 */
export const readinessStatus = (ready: boolean): 200 | 503 => (ready ? 200 : 503)

/** How one app words the failures that are not already ApiErrors. */
export interface FailureWording {
  /** The app's 503 (which dependency, in its users' words). */
  unavailable: () => ApiError
  /** The app's 500 message. */
  internalMessage: string
  /** The app's reading of a framework 4xx; undefined: 400-range status, `bad_request`, the framework's message. */
  request?: (failure: RequestFailure) => ApiError | undefined
}

/** The ApiError for anything thrown, by the classification above and an app's wording. */
export function failureResponse(err: unknown, wording: FailureWording): ApiError {
  const failure = classifyFailure(err)
  switch (failure.kind) {
    case 'answered':
      return failure.error
    case 'request':
      return wording.request?.(failure) ?? new ApiError(failure.status, 'bad_request', failure.message)
    case 'unavailable':
      return failure.named ? errors.unavailable(failure.named.code, failure.named.message, failure.named.retryAfterSeconds) : wording.unavailable()
    case 'fault':
      return new ApiError(500, 'internal_error', wording.internalMessage)
  }
}
