// Forwarding to the core (SPEC §4.6) with @fastify/reply-from: the request line, query
// and body go through unchanged (bodies other than forms are streamed, never buffered
// whole), hop-by-hop headers are dropped (RFC 9110 §7.6.1), credentials and every inbound
// X-Kigo-* header are removed, and the signed identity is added.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import replyFrom, { type FastifyReplyFromHooks } from '@fastify/reply-from'
import type { KeyObject } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { type Identity, signIdentity } from '../../common/identity.js'
import { errors, type ApiError } from '../../common/errors.js'
import type { DependencyWatch } from '../../common/dependency-watch.js'
import type { LineRewrite } from '../../common/request-logger.js'

export interface ForwardOptions {
  coreUrl: string
  timeoutMs: number
  identityKey: KeyObject
  stripCredentials: boolean
  /** Told when the core did or did not answer (one line per core outage, not per request). */
  watch?: Pick<DependencyWatch, 'failed' | 'succeeded'>
}

export interface ForwardContext {
  identity: Identity | null
  /** Public host and scheme the client addressed (after trusted-proxy handling). */
  host: string
  scheme: 'http' | 'https'
  clientIp: string
  /** The route-table operation authorized; '' for the catch-all. Signed with the identity. */
  operation: string
  /** Base64url SHA-256 of the body the gateway read and verified; '' when streamed. */
  bodySha256: string
  /** Remove the credentials whatever the configuration says (requests forwarded without an identity). */
  stripCredentials?: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the forward below was given, for reply-from's header rewrite; null until then. */
    forward: ForwardContext | null
  }
}

const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate'])

/** The headers the core receives for `request`. */
export function forwardedHeaders(request: FastifyRequest, incoming: IncomingHttpHeaders, ctx: ForwardContext, opts: ForwardOptions): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {}
  const strip = opts.stripCredentials || ctx.stripCredentials === true
  // Runs on every request: a plain loop over the names and a Set, no [name, value] pairs.
  for (const name in incoming) {
    if (hopByHop.has(name) || name.startsWith('x-kigo-')) continue
    const value = incoming[name]
    if (strip && (name === 'authorization' || name === 'x-wsse')) continue
    if (name === 'cookie') {
      const kept = withoutKigoCookies(String(value))
      if (kept !== '') out.cookie = kept
      continue
    }
    out[name] = value
  }
  // reply-from normalises these for the upstream; the core must see them as sent.
  out.host = ctx.host
  const contentType = request.headers['content-type']
  if (contentType !== undefined && out['content-type'] !== undefined) out['content-type'] = contentType
  // Node joins a repeated X-Forwarded-For into one string: the array is only in the type.
  const prior = request.headers['x-forwarded-for'] as string | undefined
  out['x-forwarded-for'] = prior && ctx.clientIp !== request.socket.remoteAddress ? `${prior}, ${request.socket.remoteAddress}` : ctx.clientIp
  out['x-forwarded-proto'] = ctx.scheme
  out['x-forwarded-host'] = ctx.host
  const requestId = String(request.id)
  if (ctx.identity) {
    Object.assign(out, signIdentity(opts.identityKey, { method: request.method, url: request.url, host: ctx.host, requestId, operation: ctx.operation, bodySha256: ctx.bodySha256 }, ctx.identity))
  } else {
    // An anonymous request carries no identity, so there is nothing to sign: the core
    // treats a request without identity headers as anonymous, whoever sends it.
    out['x-kigo-request-id'] = requestId
  }
  return out
}

/**
 * The Cookie header without kigo's own cookies (the account session, the dashboard
 * session): credentials of the gateway that the core never needs (RFC 6265 §5.4 syntax).
 */
export function withoutKigoCookies(header: string): string {
  return header
    .split(';')
    .map((c) => c.trim())
    .filter((c) => c !== '' && !c.toLowerCase().startsWith('kigo_'))
    .join('; ')
}

function upstreamError(err: Error & { code?: string; cause?: unknown }): ApiError {
  const cause = (err.cause ?? {}) as { code?: string; name?: string }
  const code = err.code ?? ''
  if (code === 'FST_REPLY_FROM_GATEWAY_TIMEOUT' || cause.code === 'UND_ERR_HEADERS_TIMEOUT' || cause.code === 'UND_ERR_BODY_TIMEOUT' || cause.name === 'TimeoutError') {
    return errors.gatewayTimeout()
  }
  const refused = ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT'].some((c) => c === cause.code || c === code || err.message.includes(c))
  if (refused || code === 'FST_REPLY_FROM_SERVICE_UNAVAILABLE' || code === 'FST_REPLY_FROM_CONNECT_TIMEOUT') {
    return errors.unavailable('upstream_unavailable', 'The entry service is unavailable; try again shortly')
  }
  return errors.badGateway('The entry service failed to answer')
}

/**
 * reply-from logs every failed forward at warn with the error's stack; the outcome is
 * already the request's own line (status 503/504/502) and, for an unreachable core, the
 * watch's outage lines. Given to the gateway's request loggers, this keeps reply-from's
 * line at debug, with the message and code only.
 */
export const quietForwardErrors: LineRewrite = (level, args) => {
  if (level !== 'warn' || args[1] !== 'response errored') return null
  const e = args[0] as { message?: string; code?: string } | undefined
  return { level: 'debug', args: [{ error: e?.message, code: e?.code }, 'forward failed'] }
}

const idempotent = new Set(['GET', 'HEAD', 'OPTIONS'])
const retriedErrors = new Set(['ECONNRESET', 'UND_ERR_SOCKET'])

/** The core's answer headers without the hop-by-hop ones, copied without `delete` (which would turn the copy into a slow dictionary). */
function answerHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {}
  for (const name in headers) if (!hopByHop.has(name)) out[name] = headers[name]
  return out
}

/** Forwards `request` to the core as `context` says (identity, public origin, operation). */
export type Forward = (request: FastifyRequest, reply: FastifyReply, context: ForwardContext) => FastifyReply

function contextOf(request: FastifyRequest): ForwardContext {
  if (request.forward === null) throw new Error('a request reached reply-from without its forward context')
  return request.forward
}

export async function registerForwarding(app: FastifyInstance, opts: ForwardOptions): Promise<Forward> {
  app.decorateRequest('forward', null)
  await app.register(replyFrom, {
    base: opts.coreUrl,
    undici: { connections: 128, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs },
    disableRequestLogging: true,
    // Only idempotent requests are retried (SPEC §4.6), once, and only when the
    // connection failed before any answer.
    retryMethods: ['GET', 'HEAD', 'OPTIONS'],
    maxRetriesOn503: 0,
  })
  // reply-from's options do not depend on the request (each function is handed it), so
  // they are made once instead of four closures per request.
  const fromOptions: FastifyReplyFromHooks = {
    timeout: opts.timeoutMs,
    rewriteRequestHeaders: (request, headers) => forwardedHeaders(request as FastifyRequest, headers, contextOf(request as FastifyRequest), opts),
    rewriteHeaders: (headers) => answerHeaders(headers),
    retryDelay: ({ err, req, attempt }) =>
      err && attempt < 1 && idempotent.has(req.method ?? '') && retriedErrors.has((err as { code?: string }).code ?? '') ? 0 : null,
    onResponse: (_request, reply, res) => {
      opts.watch?.succeeded()
      void reply.send(res.stream)
    },
    onError: (reply, { error }) => {
      const request = reply.request
      const apiError = upstreamError(error)
      const clientGone = request.raw.destroyed || request.raw.socket?.destroyed === true
      if (clientGone) {
        // The client went away mid-request (an aborted upload): theirs to retry, not ours.
        request.log.info({ error: error.message, code: (error as { code?: string }).code }, 'client closed the request before the core answered')
      } else if (apiError.status === 503) opts.watch?.failed((error as { cause?: unknown }).cause ?? error)
      else request.log.warn({ error: error.message, code: (error as { code?: string }).code }, 'upstream failed')
      void reply.send(apiError)
    },
  }
  return (request, reply, context) => {
    // reply-from hands its hooks the request only: the context travels on it.
    request.forward = context
    // The path alone: reply-from then takes the query from the raw request line, byte for
    // byte (given whole, it would re-encode it as a WHATWG URL, and throw on malformed
    // percent-encoding).
    const q = request.url.indexOf('?')
    return reply.from(q === -1 ? request.url : request.url.slice(0, q), fromOptions)
  }
}
