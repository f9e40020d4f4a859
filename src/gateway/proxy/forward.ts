// Forwarding to the core (docs/gateway.md#forwarding) on undici's connection pool: the request line, query
// and body go through unchanged (the path and query are the bytes of the request line;
// bodies other than forms are streamed, never buffered whole), hop-by-hop headers and
// those the Connection header names are dropped (RFC 9110 §7.6.1), credentials and every
// inbound X-Kigo-* header are removed, and the signed identity is added. The core's answer
// comes back the same way: a small one read whole and sent in one write, a large one
// streamed at the client's pace.
// Written on undici itself rather than @fastify/reply-from: for each request reply-from
// parses the path as a WHATWG URL (twice, with a cache keyed by JSON), copies the headers
// three times and sets the answer's headers one call at a time; side by side in front of
// the same upstream, Fastify with undici's pool called directly served 1.4 times the
// requests of Fastify with reply-from, at 51 against 73 µs of CPU per request
// (docs/performance.md#forwarding-on-undicis-pool). Answers go through undici's dispatch
// interface rather than its `request`, whose body stream, and Fastify's two end-of-stream
// watches on it, cost more than the rest of the answer's handling
// (docs/performance.md#small-answers-in-one-write).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { KeyObject } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import { Agent, type Dispatcher } from 'undici'
import { clientGone } from '../../common/client-gone.js'
import { closeAfterAnswer } from '../../common/linger.js'
import { type Identity, signIdentity } from '../../common/identity.js'
import { ApiError, errors, Unavailable } from '../../common/errors.js'
import type { WatchedCalls } from '../../common/dependency-watch.js'
import { withoutTraceContext, type ForwardSpan } from '../../common/tracing.js'

export interface ForwardOptions {
  coreUrl: string
  timeoutMs: number
  identityKey: KeyObject
  stripCredentials: boolean
  /**
   * Told when the core did or did not answer (one line per core outage, not per request). An
   * answer to a forward sent before the outage started ends nothing: a core closing answers
   * the requests it holds while it refuses new ones.
   */
  watch?: WatchedCalls
  /** Tracing on: a client span per forward, whose trace context replaces the caller's (docs/operations.md#traces). */
  trace?: (request: FastifyRequest, method: string) => ForwardSpan
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

// The hop-by-hop headers (RFC 9110 §7.6.1), never passed on, and Expect with them: Node's
// server has already met a 100-continue expectation (the client got its 100 before the
// handler ran) and refused any other with 417, and undici will not send the header:
// forwarded, it made every such request a 502.
// Forwarded (RFC 7239) is dropped too: the gateway states the origin it believed in
// X-Forwarded-*, and a client's own Forwarded header would contradict it to the core.
const notForwarded = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate', 'expect', 'forwarded'])

/**
 * True for a name that reads as X-Kigo-… once underscores count as hyphens, as CGI-style
 * servers and some proxies read them (`x_kigo_user`, `X-Kigo_User`): kigo's own headers
 * are the gateway's to write, never a client's to pass through. Names arrive lower-cased.
 */
export function isKigoHeader(name: string): boolean {
  if (name.length < 7 || name.charCodeAt(0) !== 120 /* x */) return false
  const first = name.charCodeAt(1)
  const second = name.charCodeAt(6)
  return (first === 45 || first === 95) && (second === 45 || second === 95) && name.startsWith('kigo', 2)
}

/** The header names a Connection header lists (RFC 9110 §7.6.1), lower-cased; null when there are none. */
function connectionOptions(connection: string | undefined): Set<string> | null {
  // Nearly every request says only this: no list to read.
  if (connection === undefined || connection === 'keep-alive' || connection === 'close') return null
  const names = new Set<string>()
  for (const token of connection.split(',')) {
    const name = token.trim().toLowerCase()
    if (name !== '' && name !== 'close' && name !== 'keep-alive') names.add(name)
  }
  return names.size === 0 ? null : names
}

/**
 * The headers the core receives for `request`. `attempt` counts the gateway's own resends
 * (a read whose connection failed before any answer): each is signed afresh under its own
 * request ID (`<id>.<attempt>`), since the core runs a signed request once only and may
 * have received the first.
 */
export function forwardedHeaders(request: FastifyRequest, ctx: ForwardContext, opts: ForwardOptions, attempt = 0): IncomingHttpHeaders {
  const incoming = request.headers
  const out: IncomingHttpHeaders = {}
  const strip = opts.stripCredentials || ctx.stripCredentials === true
  const listed = connectionOptions(incoming.connection)
  // Runs on every request: a plain loop over the names and a Set, no [name, value] pairs.
  for (const name in incoming) {
    if (notForwarded.has(name) || isKigoHeader(name) || (listed !== null && listed.has(name))) continue
    const value = incoming[name]
    if (strip && (name === 'authorization' || name === 'x-wsse')) continue
    if (name === 'cookie') {
      const kept = withoutKigoCookies(String(value))
      if (kept !== '') out.cookie = kept
      continue
    }
    out[name] = value
  }
  out.host = ctx.host
  // Node joins a repeated X-Forwarded-For into one string: the array is only in the type.
  const prior = incoming['x-forwarded-for'] as string | undefined
  out['x-forwarded-for'] = prior && ctx.clientIp !== request.socket.remoteAddress ? `${prior}, ${request.socket.remoteAddress}` : ctx.clientIp
  out['x-forwarded-proto'] = ctx.scheme
  out['x-forwarded-host'] = ctx.host
  const requestId = attempt === 0 ? String(request.id) : `${String(request.id)}.${attempt}`
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

/** The core could not be reached at all (refused, unknown, unreachable): an outage of the core, a 503 by classifyFailure. */
export class CoreUnreachable extends Unavailable {
  override name = 'CoreUnreachable'
  constructor() {
    super('upstream_unavailable', 'The entry service is unavailable; try again shortly')
  }
}

/** What the client is told when the core could not be reached or did not answer in time. */
export function upstreamError(err: Error & { code?: string; cause?: unknown }): ApiError | CoreUnreachable {
  const cause = (err.cause ?? {}) as { code?: string }
  const code = err.code ?? cause.code ?? ''
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return errors.gatewayTimeout()
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EAI_AGAIN' || code === 'UND_ERR_CONNECT_TIMEOUT') return new CoreUnreachable()
  return errors.badGateway('The entry service failed to answer')
}

const idempotent = new Set(['GET', 'HEAD', 'OPTIONS'])
/** A connection that failed before any answer: an idempotent request is sent once more. */
const retriedErrors = new Set(['ECONNRESET', 'UND_ERR_SOCKET'])

/** The core's answer headers without the hop-by-hop ones and those its Connection header names. */
function answerHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = connectionOptions(headers.connection)
  const out: IncomingHttpHeaders = {}
  for (const name in headers) if (!notForwarded.has(name) && (listed === null || !listed.has(name))) out[name] = headers[name]
  return out
}

/** Forwards `request` to the core as `context` says (identity, public origin, operation). */
export type Forward = (request: FastifyRequest, reply: FastifyReply, context: ForwardContext) => void

/** The body the core receives: none for GET and HEAD, the form read whole, or the client's stream. */
function bodyOf(request: FastifyRequest): Buffer | Readable | null {
  if (request.method === 'GET' || request.method === 'HEAD') return null
  const body = request.body as Buffer | Readable | undefined | null
  return body ?? null
}

/**
 * Answers whose Content-Length is at most this are read whole and sent in one write; larger
 * ones, and those of unknown length, are streamed as they arrive. Reading a small answer
 * whole skips two streams and their end-of-stream watches per request
 * (docs/performance.md#small-answers-in-one-write).
 */
export const wholeAnswerLimit = 64 * 1024

/** What a CoreAnswer reports back to the forward that made it. */
interface AnswerCallbacks {
  /** The core answered (its status line arrived). */
  answered(status: number): void
  /** No answer started: the connection failed, timed out or was refused. */
  failed(err: Error & { code?: string }): void
}

/**
 * Receives the core's answer for one forward (undici's dispatch handler): the status and
 * headers as they arrive, then either the whole small body, sent in one write, or a stream
 * of a large one with backpressure (the core's connection pauses while the client reads).
 * An answer that breaks off before the client was sent anything is a 502 in format.
 */
class CoreAnswer implements Dispatcher.DispatchHandler {
  private status = 0
  private headers: IncomingHttpHeaders = {}
  private chunks: Buffer[] | null = null
  private stream: Readable | null = null
  /** Nothing more to do: sent or dropped (a streamed answer is the stream's from then on). */
  private settled = false
  /** The core's answer arrived whole. */
  private ended = false

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly callbacks: AnswerCallbacks,
  ) {}

  // Present so that undici calls this handler by its current interface (onResponse*).
  onRequestStart(): void {}

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx answers are informational: undici goes on waiting for the final one.
    if (statusCode < 200) return
    this.callbacks.answered(statusCode)
    const { request, reply } = this
    // The client may have gone while the core answered: the answer is dropped, not sent.
    if (clientGone(request, reply)) return this.drop(controller)
    if (statusCode > 599) {
      this.drop(controller)
      return void reply.send(errors.badGateway('The entry service failed to answer'))
    }
    this.status = statusCode
    this.headers = answerHeaders(headers)
    // An HTTP/1.1 connection cannot be reused until its request body has been read: when
    // the core answered before that (a refusal), the connection closes after the answer.
    if (!request.raw.complete) {
      this.headers.connection = 'close'
      closeAfterAnswer(request.raw, reply.raw)
    }
    const length = headers['content-length']
    if (hasNoBody(request.method, statusCode) || (typeof length === 'string' && Number(length) <= wholeAnswerLimit)) {
      this.chunks = []
      return
    }
    const stream = new Readable({
      read: () => controller.resume(),
      // The client went away mid-answer (Fastify destroys the stream): stop reading the core.
      destroy: (err, done) => {
        if (!controller.aborted && !this.ended) controller.abort(err ?? new Error('answer abandoned'))
        done(err)
      },
    })
    this.stream = stream
    void reply.code(statusCode).headers(this.headers).send(stream)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.chunks !== null) this.chunks.push(chunk)
    else if (this.stream !== null && !this.stream.push(chunk)) controller.pause()
  }

  onResponseEnd(): void {
    this.ended = true
    if (this.stream !== null) return void this.stream.push(null)
    if (this.chunks === null || this.settled) return
    this.settled = true
    const { request, reply, chunks } = this
    if (clientGone(request, reply)) return
    const body = hasNoBody(request.method, this.status) ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
    void reply.code(this.status).headers(this.headers).send(body)
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error & { code?: string }): void {
    if (this.stream !== null) {
      // Fastify answers the 502 if nothing had gone yet, else cuts the client's connection.
      if (!this.stream.destroyed) this.stream.destroy(upstreamError(err))
      return
    }
    if (this.settled) return
    this.settled = true
    if (this.status === 0) return this.callbacks.failed(err)
    // The answer broke off before anything was sent: the client is told so, in format.
    if (clientGone(this.request, this.reply)) return
    this.request.log.warn({ error: err.message, code: err.code }, 'the core broke off its answer')
    void this.reply.send(errors.badGateway('The entry service failed to answer'))
  }

  private drop(controller: Dispatcher.DispatchController): void {
    this.settled = true
    controller.abort(new Error('answer dropped'))
  }
}

/** Answers that never carry a body (RFC 9110 §6.4.1): Fastify must not give them a length of 0. */
function hasNoBody(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304
}

export function registerForwarding(app: FastifyInstance, opts: ForwardOptions): Forward {
  const origin = new URL(opts.coreUrl).origin
  // An Agent (a pool per origin, here one), as reply-from used: with a bare Pool, a forward
  // whose client vanished mid-upload left a fresh connection to the core open and unused,
  // which held the core's graceful close until its head deadline.
  const agent = new Agent({
    connections: 128,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  })
  // Runs once the server has stopped taking requests and the last answer has gone.
  app.addHook('onClose', async () => {
    await agent.destroy()
  })

  const failed = (request: FastifyRequest, reply: FastifyReply, err: Error & { code?: string }): void => {
    // The gateway's own refusal of a body it was streaming (body-hash-gate.ts): the client's answer.
    if (err instanceof ApiError) {
      if (!reply.sent) void reply.send(err)
      return
    }
    const answer = upstreamError(err)
    if (clientGone(request, reply)) {
      // The client went away mid-request (an aborted upload): theirs to retry, not ours.
      request.log.info({ error: err.message, code: err.code }, 'client closed the request before the core answered')
    } else if (answer instanceof CoreUnreachable) opts.watch?.failed(err)
    else request.log.warn({ error: err.message, code: err.code }, 'upstream failed')
    if (!reply.sent) void reply.send(answer)
  }

  return (request, reply, context) => {
    const span = opts.trace?.(request, request.method)
    const began = opts.watch?.mark?.()
    // The core continues the gateway's trace, never the caller's directly (which it is the parent of).
    // A caller's context is dropped even when the gateway traces nothing: a core that traces
    // would otherwise let the caller choose what it samples (docs/security.md#trace-context-at-the-edge).
    const traced = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
      withoutTraceContext(headers)
      if (span === undefined) return headers
      return Object.assign(headers, span.headers())
    }
    const options: Dispatcher.DispatchOptions = {
      origin,
      method: request.method,
      // The request line's own bytes: the gateway read this path (canonicalPath) and this
      // query, and the core reads the same.
      path: request.url,
      headers: traced(forwardedHeaders(request, context, opts)),
      body: bodyOf(request),
    }
    const send = (retried: boolean): void => {
      agent.dispatch(options, new CoreAnswer(request, reply, {
        answered: (status) => {
          opts.watch?.succeeded(began)
          span?.end(status)
        },
        failed: (err) => {
          const code = err.code ?? ''
          if (!retried && options.body === null && idempotent.has(request.method) && retriedErrors.has(code) && !reply.sent) {
            options.headers = traced(forwardedHeaders(request, context, opts, 1))
            return send(true)
          }
          span?.end(err)
          failed(request, reply, err)
        },
      }))
    }
    send(false)
  }
}
