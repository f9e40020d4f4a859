// The gateway's public application (SPEC §4): every request is authenticated by the
// route's rules, then forwarded unchanged to the core with a signed identity. Built
// without listening; server.ts listens.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyBaseLogger } from 'fastify'
import proxyAddr from '@fastify/proxy-addr'
import type { Config } from '../common/config.js'
import { ApiError, errors } from '../common/errors.js'
import { formatOfPath, renderError } from '../common/formats.js'
import { clientGone, isWrite } from '../common/client-gone.js'
import { withDeadline } from '../common/deadline.js'
import type { DependencyWatch } from '../common/dependency-watch.js'
import { identityKey } from '../common/identity.js'
import { requestLogging } from '../common/request-logger.js'
import { createAuthenticator, type AuthDecision } from './authenticate.js'
import type { AuthRequest, CredentialLookup } from './auth/types.js'
import { childOf, type GatewayMetrics } from './operator/metrics.js'
import { registerForwarding } from './proxy/forward.js'
import type { LegacyPolicyCheck } from './policy/service.js'
import type { ReplayCache } from './replay/types.js'
import { routeResolver, type RoutePolicy } from './routes.js'
import type { AttemptThrottle } from './throttle/attempts.js'
import { clientName } from './usage/client-name.js'
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

/** Form bodies are signed (RFC 5849 §3.4.1.3.1), so they are read whole (and forwarded as read). */
const formBodyLimit = 1024 * 1024
/** Bodies covered by oauth_body_hash are read whole too: at most the core's largest upload. */
const hashedBodyLimit = 48 * 1024 * 1024

/** The request as the verifiers see it: public host and scheme, the raw form body. */
export function toAuthRequest(request: FastifyRequest, origin: PublicOrigin, now: number): AuthRequest {
  return {
    method: request.method,
    url: request.url,
    host: origin.host,
    scheme: origin.scheme,
    headers: request.headers,
    contentType: request.headers['content-type'],
    body: Buffer.isBuffer(request.body) ? request.body : undefined,
    now,
  }
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
  })

  const trusted = config.trustedProxies.length > 0 ? proxyAddr.compile(config.trustedProxies) : null
  const resolveRoute = routeResolver(config.auth.routeMethods)
  const authenticator = createAuthenticator({ auth: config.auth, lookup: deps.lookup, replay: deps.replay, throttle: deps.throttle, ...(deps.policy ? { policy: deps.policy } : {}) })
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
  app.addContentTypeParser('*', (req, payload, done) => {
    // A client that sends oauth_body_hash signs the whole body (OAuth Request Body Hash),
    // which can only be checked once it has all arrived: then, and only then, it is read.
    const authorization = req.headers.authorization
    const hashed = (typeof authorization === 'string' && authorization.includes('oauth_body_hash')) || req.url.includes('oauth_body_hash')
    if (!hashed) return done(null, payload)
    const chunks: Buffer[] = []
    let size = 0
    payload.on('data', (c: Buffer) => {
      size += c.length
      if (size > hashedBodyLimit) {
        payload.destroy()
        done(Object.assign(new Error('The request body is too large'), { statusCode: 413 }), undefined)
        return
      }
      chunks.push(c)
    })
    payload.on('end', () => done(null, Buffer.concat(chunks)))
    payload.on('error', (err) => done(err, undefined))
  })

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (err instanceof ApiError) return sendError(request, reply, err)
    if (err instanceof URIError) return sendError(request, reply, errors.badRequest('bad_request', 'The request URL is not validly percent-encoded'))
    const status = err.statusCode ?? 500
    if (status === 413) return sendError(request, reply, errors.tooLarge('body_too_large', 'The request body is too large'))
    if (status >= 400 && status < 500) return sendError(request, reply, new ApiError(status, 'bad_request', err.message))
    request.log.error({ err }, 'gateway error')
    return sendError(request, reply, new ApiError(500, 'internal_error', 'Internal error'))
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
    if (logRequests) {
      request.log.info({
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
      const proto = typeof xfp === 'string' ? xfp.split(',')[0]!.trim().toLowerCase() : ''
      const host = typeof xfh === 'string' ? xfh.split(',')[0]!.trim() : request.headers.host ?? ''
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
    const authReq = toAuthRequest(request, origin, now())
    const started = process.hrtime.bigint()
    let decision: AuthDecision
    try {
      // The whole of verification (credential lookup, nonce claim, throttle counts) is
      // bounded: a dependency that never answers costs at most requestDeadlineMs.
      decision = await withDeadline(authenticator.authenticate(authReq, route, origin.ip), config.dependencies.requestDeadlineMs, 'authentication')
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
    const route = resolveRoute(request.method, q === -1 ? request.url : request.url.slice(0, q))
    const decision = await authenticateRequest(request, route)
    if (!decision.ok) return sendError(request, reply, decision.error)
    // Verification may have waited for a slow dependency; a client that gave up meanwhile
    // gets no write made on its behalf.
    if (isWrite(request.method) && clientGone(request, reply)) {
      request.log.info({ route: route.name }, 'client closed the connection before the request was forwarded; not forwarded')
      return reply.hijack()
    }
    const origin = request.origin!
    request.forward = { identity: decision.identity, host: origin.host, scheme: origin.scheme, clientIp: origin.ip }
    // Deprecation, Sunset and Link of the migration policy (SPEC §6.1) on an accepted
    // legacy request; the core sends none of these, so the forwarded response keeps them.
    if (decision.headers) void reply.headers(decision.headers)
    request.upstreamStartedAt = process.hrtime.bigint()
    return forward(request, reply)
  }

  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/*', handler })
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/', handler })
  return app
}
