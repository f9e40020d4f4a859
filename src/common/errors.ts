// The error catalogue (SPEC §2.7): one stable code per failure, its HTTP status, and
// optional headers (challenges, Retry-After). Routes throw ApiError; one handler per app
// renders it in the request's format.

export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string | string[]> = {},
  ) {
    super(message)
  }
}

export const errors = {
  badRequest: (code: string, message: string) => new ApiError(400, code, message),
  unauthorized: (code: string, message: string, headers: Record<string, string | string[]> = {}) =>
    new ApiError(401, code, message, headers),
  forbidden: (code: string, message: string, headers: Record<string, string | string[]> = {}) =>
    new ApiError(403, code, message, headers),
  notFound: (code = 'not_found', message = 'No such resource') => new ApiError(404, code, message),
  methodNotAllowed: (allow: string[]) =>
    new ApiError(405, 'method_not_allowed', `Method not allowed; use ${allow.join(', ')}`, { allow: allow.join(', ') }),
  tooLarge: (code: string, message: string) => new ApiError(413, code, message),
  unsupportedMedia: (code: string, message: string) => new ApiError(415, code, message),
  tooManyRequests: (retryAfterSeconds: number, message = 'Too many failed attempts; try again later') =>
    new ApiError(429, 'too_many_requests', message, { 'retry-after': String(retryAfterSeconds) }),
  badGateway: (message = 'The upstream service failed') => new ApiError(502, 'bad_gateway', message),
  unavailable: (code = 'service_unavailable', message = 'A dependency is unavailable; try again shortly', retryAfterSeconds = 5) =>
    new ApiError(503, code, message, { 'retry-after': String(retryAfterSeconds) }),
  gatewayTimeout: (message = 'The upstream service did not answer in time') => new ApiError(504, 'gateway_timeout', message),
}
