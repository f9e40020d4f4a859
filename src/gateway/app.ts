// The gateway's public application (SPEC §4): every request is authenticated by the
// route's rules, then forwarded unchanged to the core with a signed identity. Built
// without listening; server.ts listens.
import { createHash, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyBaseLogger } from 'fastify'
import proxyAddr from '@fastify/proxy-addr'
import type { Config } from '../common/config.js'
import { ApiError, errors, failureResponse, type FailureWording } from '../common/errors.js'
import { formatOfPath, renderError } from '../common/formats.js'
import { clientGone, isWrite } from '../common/client-gone.js'
import { withDeadline } from '../common/deadline.js'
import type { DependencyWatch } from '../common/dependency-watch.js'
import { identityKey } from '../common/identity.js'
import { canonicalPath } from '../common/route-table.js'
import { requestLogging } from '../common/request-logger.js'
import { createAuthenticator, type AuthDecision } from './authenticate.js'
import type { AuthRequest, CredentialLookup } from './auth/types.js'
import { childOf, type GatewayMetrics } from './operator/metrics.js'
import { registerForwarding, type ForwardContext } from './proxy/forward.js'
import type { LegacyPolicyCheck } from './policy/service.js'
import type { ReplayCache } from './replay/types.js'
import { routeResolver, type RoutePolicy } from './routes.js'
import type { AttemptThrottle } from './throttle/attempts.js'
import { clientName } from './usage/client-name.js'
import { readStreamedBody } from './auth/read-body.js'
import type { UsageRecorder } from './usage/recorder.js'

export interface GatewayDeps {
  config: Config
  lookup: CredentialLookup
  replay: { oauth: ReplayCache; wsse: ReplayCache }
  throttle: AttemptThrottle
  metrics: GatewayMetrics
  /** Readiness of the gateway's own dependencies (store, Redis, core). */
  ready: () => Promise<Record<string, boolean>>
  /** A pino instance (Fastify 5 takes it as loggerInstance), or false for none. */
  logger?: FastifyBaseLogger | false
  now?: () => number
  /** Migration policy for verified legacy requests (SPEC §6.1). */
  policy?: LegacyPolicyCheck
  /** Usage report and per-minute counts (SPEC §6.3, §6.4). */
  usage?: Pick<UsageRecorder, 'observe'>
  /** Logs the start and end of a core outage (forwards refused or timed out). */
  coreWatch?: Pick<DependencyWatch, 'failed' | 'succeeded'>
}

export interface PublicOrigin {
  host: string
  scheme: 'http' | 'https'
  ip: string
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthDecision
    routeName?: string
    /** When the request was handed to the core (the upstream histogram). */
    upstreamStartedAt?: bigint
    origin?: PublicOrigin
  }
  interface FastifyInstance {
    /** Authenticates a request by a route's rules (SPEC §4.1) and records the decision. */
    gatewayAuth(request: FastifyRequest, route: RoutePolicy): Promise<AuthDecision>
    /** The host, scheme and client address the request came from (trusted proxies applied). */
    publicOrigin(request: FastifyRequest): PublicOrigin
  }
}

/** What the public gateway's own routes throw, in the error catalogue (SPEC §2.7). */
const gatewayWording: FailureWording = {
  request: (f) => {
    if (f.reason === 'URIError') return errors.badRequest('bad_request', 'The request URL is not validly percent-encoded')
    if (f.status === 413) return errors.tooLarge('body_too_large', 'The request body is too large')
    return undefined
  },
  unavailable: () => errors.unavailable(),
  internalMessage: 'Internal error',
}

/** Form bodies are signed (RFC 5849 §3.4.1.3.1), so they are read whole (and forwarded as read). */
const formBodyLimit = 1024 * 1024

/** The request as the verifiers see it: public host and scheme, the raw form body. */
export function toAuthRequest(request: FastifyRequest, origin: PublicOrigin, now: number, hashedBodyLimit = 0): AuthRequest {
  return {
    method: request.method,
    url: request.url,
    host: origin.host,
    scheme: origin.scheme,
    headers: request.headers,
    contentType: request.headers['content-type'],
    body: Buffer.isBuffer(request.body) ? request.body : undefined,
    ...(hashedBodyLimit > 0 ? { readBody: () => readWhole(request, hashedBodyLimit) } : {}),
    now,
    readBodyForAdvice: (limit) => readStreamedBody(request.body, limit),
  }
}

/** SHA-256 (base64url) of the body the gateway read whole (a form, or one under oauth_body_hash); '' when streamed. */
function bodyDigest(request: FastifyRequest): string {
  const read = Buffer.isBuffer(request.body) ? request.body : verifiedBodies.get(request)
  return read === undefined ? '' : createHash('sha256').update(read).digest('base64url')
}

/** Bodies read whole to check oauth_body_hash, by request: their digest is signed for the core. */
const verifiedBodies = new WeakMap<FastifyRequest, Buffer>()

/**
 * Reads a streamed body whole (at most `limit` bytes; null past it, the rest left for
 * Node to discard), and hands it on as a stream of the same bytes, so that the core
 * receives exactly what the gateway verified.
 */
function readWhole(request: FastifyRequest, limit: number): Promise<Buffer | null> {
  const body = request.body as NodeJS.ReadableStream | Buffer | undefined | null
  if (body === undefined || body === null) return Promise.resolve(Buffer.alloc(0))
  if (Buffer.isBuffer(body)) return Promise.resolve(body)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      body.removeListener('data', onData)
      body.removeListener('end', onEnd)
      body.pause()
      resolve(null)
    }
    const onEnd = () => {
      const whole = Buffer.concat(chunks)
      verifiedBodies.set(request, whole)
      request.body = Readable.from([whole])
      resolve(whole)
    }
    body.on('data', onData)
    body.once('end', onEnd)
    body.once('error', reject)
  })
}

/** The last element of a comma-separated header value (RFC 9110 §5.6.1), trimmed. */
function lastListValue(value: string): string {
  return value.slice(value.lastIndexOf(',') + 1).trim()
}

/** The credential header sent more than once (`Authorization` or `X-WSSE`), else null. */
export function repeatedCredentialHeader(rawHeaders: string[]): string | null {
  let authorization = 0
  let wsse = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++
    else if (name.length === 6 && name.toLowerCase() === 'x-wsse') wsse++
  }
  return authorization > 1 ? 'Authorization' : wsse > 1 ? 'X-WSSE' : null
}

const statusClasses = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx']
const statusClass = (status: number): string => statusClasses[Math.floor(status / 100)] ?? 'other'

/** Sends an ApiError in the request's format (SPEC §2.7). */
export function sendError(request: FastifyRequest, reply: FastifyReply, err: ApiError): FastifyReply {
  const format = formatOfPath(request.url) ?? 'json'
  const callback = format === 'json' ? callbackOf(request) : undefined
  const out = renderError(format, err, callback)
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v)
  for (const [k, v] of Object.entries(out.headers)) void reply.header(k, v)
  return reply.code(err.status).type(out.contentType).send(out.body)
}

function callbackOf(request: FastifyRequest): string | undefined {
  const q = request.query as Record<string, unknown> | undefined
  const cb = q?.callback
  return typeof cb === 'string' ? cb : undefined
}

export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config, metrics } = deps
  const now = deps.now ?? Date.now
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...requestLogging(),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    // Deadlines on the client side (a body trickled a byte at a time must not hold a
    // connection forever): Node answers 408 and closes past them. Checked every second.
    requestTimeout: config.gateway.http.requestTimeoutMs,
    connectionTimeout: config.gateway.http.idleTimeoutMs,
    keepAliveTimeout: config.gateway.http.keepAliveTimeoutMs,
    http: { headersTimeout: config.gateway.http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
  })
  app.server.maxConnections = config.gateway.http.maxConnections

  const trusted = config.trustedProxies.length > 0 ? proxyAddr.compile(config.trustedProxies) : null
  const resolveRoute = routeResolver(config.auth.routeMethods)
  const authenticator = createAuthenticator({ auth: config.auth, lookup: deps.lookup, replay: deps.replay, throttle: deps.throttle, ...(deps.policy ? { policy: deps.policy } : {}), publicHosts: [config.domesticHost, config.globalHost] })
  const forward = await registerForwarding(app, {
    coreUrl: config.gateway.coreUrl,
    timeoutMs: config.gateway.coreTimeoutMs,
    identityKey: identityKey(config.secretKey),
    stripCredentials: config.gateway.stripCredentials,
    ...(deps.coreWatch ? { watch: deps.coreWatch } : {}),
  })

  // Bodies: urlencoded forms are read whole (their parameters are signed); everything else
  // (multipart uploads, JSON, bytes) is passed on as a stream, never buffered here.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: formBodyLimit }, (_req, body, done) => done(null, body))
  // Other bodies stay streams. One covered by oauth_body_hash (OAuth Request Body Hash) is
  // read whole during verification, and only once its consumer and token are known.
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload))

  app.setErrorHandler((err: Error, request, reply) => {
    const apiError = failureResponse(err, gatewayWording)
    if (apiError.status >= 500 && !(err instanceof ApiError)) request.log.error({ err }, 'gateway error')
    return sendError(request, reply, apiError)
  })

  const authRequests = new Map<string, { inc(): void }>()
  const authDurations = new Map<string, { observe(v: number): void }>()
  const upstreamDurations = new Map<string, { observe(v: number): void }>()

  // Hooks are callback-style and do nothing they need not: they run on every request.
  const logger = app.log as { isLevelEnabled?: (level: string) => boolean }
  const logRequests = typeof logger.isLevelEnabled === 'function' && logger.isLevelEnabled('info')
  app.addHook('onResponse', (request, reply, done) => {
    const auth = request.auth
    const route = request.routeName ?? 'gateway'
    if (auth) childOf(authRequests, (m, o, r) => metrics.authRequests.labels(m!, o!, r!), auth.method, auth.outcome, route).inc()
    if (request.upstreamStartedAt !== undefined) {
      childOf(upstreamDurations, (r, c) => metrics.upstreamDuration.labels(r!, c!), route, statusClass(reply.statusCode)).observe(Number(process.hrtime.bigint() - request.upstreamStartedAt) / 1e9)
    }
    // One line per request (SPEC §6.2); never a credential. The request ID (reqId) comes
    // from the request's logger.
    // Health checks (every few seconds from each orchestrator and balancer) at debug.
    if (logRequests) {
      const health = request.url === '/healthz' || request.url === '/readyz'
      request.log[health ? 'debug' : 'info']({
        route,
        method: request.method,
        auth: auth?.method ?? 'none',
        user: auth?.ok ? auth.identity?.user : auth?.user,
        consumer: auth?.ok ? auth.identity?.consumer || undefined : undefined,
        outcome: auth?.outcome,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 1000) / 1000,
      }, 'request')
    }
    done()
  })

  app.get('/healthz', async (_request, reply) => reply.send({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    const checks = await deps.ready()
    const ok = Object.values(checks).every(Boolean)
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable', checks })
  })

  const publicOrigin = (request: FastifyRequest): PublicOrigin => {
    const socketIp = request.socket.remoteAddress ?? ''
    if (trusted && trusted(socketIp, 0)) {
      const xfp = request.headers['x-forwarded-proto']
      const xfh = request.headers['x-forwarded-host']
      // The right-most value is the one the nearest (trusted) proxy added; values to its
      // left came from further away, and may have come from the client itself.
      const proto = typeof xfp === 'string' ? lastListValue(xfp).toLowerCase() : ''
      const host = typeof xfh === 'string' && lastListValue(xfh) !== '' ? lastListValue(xfh) : request.headers.host ?? ''
      return {
        scheme: proto === 'https' || proto === 'http' ? proto : config.publicScheme,
        host: host.toLowerCase(),
        ip: proxyAddr(request.raw, trusted),
      }
    }
    return { scheme: config.publicScheme, host: (request.headers.host ?? '').toLowerCase(), ip: socketIp }
  }

  /**
   * Authenticates `request` by `route`'s rules and records the decision on it (for the
   * request log and metrics). Plugins that serve routes of their own (the OAuth provider,
   * the user-information API) use it through `app.gatewayAuth`.
   */
  const authenticateRequest = async (request: FastifyRequest, route: RoutePolicy): Promise<AuthDecision> => {
    request.routeName = route.name
    const origin = publicOrigin(request)
    request.origin = origin
    const authReq = toAuthRequest(request, origin, now(), config.gateway.hashedBodyLimitBytes)
    const started = process.hrtime.bigint()
    let decision: AuthDecision
    try {
      // Node keeps the first of two Authorization headers and joins two X-WSSE: the
      // verifier and the core could each see another credential. Counted on the raw headers.
      // The whole of verification (credential lookup, nonce claim, throttle counts) is
      // bounded: a dependency that never answers costs at most requestDeadlineMs.
      const repeated = repeatedCredentialHeader(request.raw.rawHeaders)
      decision = repeated !== null
        ? { ok: false, method: 'none', outcome: 'malformed', error: errors.badRequest('multiple_credentials', `Send one ${repeated} header, not several`) }
        : await withDeadline(authenticator.authenticate(authReq, route, origin.ip), config.dependencies.requestDeadlineMs, 'authentication')
    } catch (err) {
      // The identity store (or another dependency of verification) failed or did not answer
      // in time: SPEC §7 says 503, counted (outcome "unavailable"), and recovery without
      // restart (nothing here is cached on failure). The outage itself is logged once, where
      // it starts and ends (dependency-watch.ts); each request's line says "unavailable".
      request.log.debug({ err: { message: (err as Error).message, name: (err as Error).name } }, 'authentication dependency failed')
      decision = { ok: false, method: 'none', outcome: 'unavailable', error: errors.unavailable('store_unavailable', 'Credentials cannot be checked right now; try again shortly') }
    }
    childOf(authDurations, (m) => metrics.authDuration.labels(m!), decision.method).observe(Number(process.hrtime.bigint() - started) / 1e9)
    // Usage (SPEC §6.3): counted in memory here, written to the store in batches elsewhere.
    deps.usage?.observe(decision, () => clientName(authReq), authReq.now)
    request.auth = decision
    return decision
  }
  app.decorate('gatewayAuth', authenticateRequest)
  app.decorate('publicOrigin', publicOrigin)

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const q = request.url.indexOf('?')
    // One reading of the path for the gateway and the core (route-table.ts): a path two
    // parsers could read differently is refused before anything else is done with it.
    const canonical = canonicalPath(q === -1 ? request.url : request.url.slice(0, q))
    if (!canonical.ok) return sendError(request, reply, errors.badRequest('bad_path', canonical.reason))
    const resolution = resolveRoute(request.method, canonical.path)
    if (resolution.kind === 'method_not_allowed') {
      if (request.method === 'OPTIONS') return reply.code(204).header('allow', [...resolution.allow, 'OPTIONS'].join(', ')).send()
      return sendError(request, reply, errors.methodNotAllowed(resolution.allow))
    }
    const isApi = canonical.path.startsWith('/api/')
    // Under /api/ only the table's operations exist: anything else is 404 here, whoever asks.
    if (resolution.kind === 'other' && isApi) return sendError(request, reply, errors.notFound())
    const route = resolution.route
    // Outside the table (pages, icons, photo bytes), only reads carry an identity; any other
    // method is forwarded as anonymous, its credentials removed unread.
    const readsOnly = resolution.kind === 'other' && request.method !== 'GET' && request.method !== 'HEAD'
    let identity: ForwardContext['identity'] = null
    if (readsOnly) {
      request.routeName = route.name
      request.origin = publicOrigin(request)
    } else {
      const decision = await authenticateRequest(request, route)
      if (!decision.ok) return sendError(request, reply, decision.error)
      identity = decision.identity
      // Deprecation, Sunset and Link of the migration policy (SPEC §6.1) on an accepted
      // legacy request; the core sends none of these, so the forwarded response keeps them.
      if (decision.headers) void reply.headers(decision.headers)
      // Verification may have waited for a slow dependency; a client that gave up meanwhile
      // gets no write made on its behalf.
      if (isWrite(request.method) && clientGone(request, reply)) {
        request.log.info({ route: route.name }, 'client closed the connection before the request was forwarded; not forwarded')
        return reply.hijack()
      }
    }
    const origin = request.origin!
    request.forward = {
      identity,
      host: origin.host,
      scheme: origin.scheme,
      clientIp: origin.ip,
      operation: route.operation?.name ?? '',
      bodySha256: bodyDigest(request),
      stripCredentials: readsOnly,
    }
    request.upstreamStartedAt = process.hrtime.bigint()
    return forward(request, reply)
  }

  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/*', handler })
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/', handler })
  return app
}
