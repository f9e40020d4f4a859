// The core application (docs/api.md): the public API behind the gateway, the photo service
// and the profile icons. Built here, listened on by server.ts only.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Config } from '../common/config.js'
import { ApiError, errors, type FailureWording } from '../common/errors.js'
import { closeSilentConnections } from '../common/client-deadlines.js'
import { clientGone, isWrite } from '../common/client-gone.js'
import errorAnswers from '../common/error-answers.js'
import { formatOfPath } from '../common/formats.js'
import { identityKey, verifyIdentity, type IdentityCheck } from '../common/identity.js'
import { requestLogging } from '../common/request-logger.js'
import { clientErrorHandler, frameworkErrors, repeatedHost, repeatedHostError } from '../common/request-edges.js'
import { deploymentMatcher, expectedHosts, type Hosts } from './entries/deployment.js'
import type { ContentStore } from './store/types.js'
import type { CoreMetrics } from './metrics.js'
import { checkSignedOperation, SeenRequestIds, tapBodyDigest, verifiedBody } from './routes/identity-guard.js'
import { canonicalPath, namesId, operations, withIdParameter, type Operation } from '../common/route-table.js'
import { contextOf, routeOf, sendError, type RouteConfig } from './routes/context.js'
import { guardUpload } from './routes/upload-guard.js'
import { ByteBudget } from '../common/byte-budget.js'
import type { CoreDeps } from './routes/deps.js'
import { favoriteRoutes } from './routes/favorites.js'
import { followRoutes } from './routes/follows.js'
import { keywordRoutes } from './routes/keywords.js'
import { pageRoutes, sendNotFoundPage, wantsPage } from './routes/pages.js'
import { timelineRoutes } from './routes/timelines.js'
import { decodeForm, queryBytes } from './routes/form-decoding.js'
import { healthRoutes } from './routes/health.js'
import { FormBody } from './routes/params.js'
import { photoRoutes } from './routes/photos.js'
import { ProfileRefresher } from './routes/profiles.js'
import { statusRoutes } from './routes/statuses.js'
import { guardStore } from './routes/store-guard.js'
import { userRoutes } from './routes/users.js'

export interface CoreAppOptions {
  config: Config
  store: ContentStore
  /** Fastify's `logger` option: false (default) for none, true or pino options. */
  logger?: FastifyServerOptions['logger']
  /** Where requests and store failures are counted (src/core/metrics.ts). */
  metrics?: CoreMetrics
}

/** What a refused upload is told to wait before trying again (Retry-After, seconds). */
const uploadRetryAfterSeconds = 5

/** A request ID from the gateway is kept for log correlation when it looks like one. */
const requestIdPattern = /^[A-Za-z0-9._:-]{1,64}$/

/** What Fastify and its plugins throw, in the error catalogue (docs/api.md#errors). */
const coreWording: FailureWording = {
  request: (f) => {
    switch (f.reason) {
      // (FST_ERR_CTP_INVALID_TYPE and _EMPTY_TYPE, once listed here, are thrown only by
      // addContentTypeParser at start, never while answering.)
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return errors.unsupportedMedia('unsupported_media_type', 'Send parameters as application/x-www-form-urlencoded or multipart/form-data')
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return errors.tooLarge('body_too_large', 'The request body is too large')
      // (A URIError's message repeats the text it could not decode: never sent back.)
      case 'URIError':
      case 'FST_ERR_BAD_URL':
        return errors.badRequest('bad_encoding', 'Malformed percent-encoding in the path')
      case 'FST_ERR_MAX_PARAM_LENGTH':
        return errors.notFound()
    }
    return f.validation ? errors.badRequest('invalid_parameter', f.message) : undefined
  },
  unavailable: () => errors.unavailable('store_unavailable', 'The content store is unavailable; try again shortly'),
  internalMessage: 'Internal server error',
}

/**
 * A write whose client (the gateway's connection) is gone is not started: the reply is
 * taken over and nothing runs. True when so.
 */
function stopIfClientGone(request: FastifyRequest, reply: FastifyReply): boolean {
  if (!isWrite(request.method) || !clientGone(request, reply)) return false
  request.log.info({ method: request.method, path: (request.raw.url ?? '').split('?')[0] }, 'client closed the connection before the write started; not started')
  reply.hijack()
  return true
}

export function buildCoreApp(options: CoreAppOptions): FastifyInstance {
  const { config } = options
  const hosts: Hosts = {
    domesticHost: config.domesticHost,
    globalHost: config.globalHost,
    publicScheme: config.publicScheme,
    domesticAliases: config.domesticHostAliases ?? [],
    globalAliases: config.globalHostAliases ?? [],
  }
  const deploymentOf = deploymentMatcher(hosts)
  const unknownDeployment = `The request host is not a deployment of this service; use one of ${expectedHosts(hosts).join(', ')} (to serve another host name, set KIGO_DOMESTIC_HOST and KIGO_GLOBAL_HOST, and KIGO_DOMESTIC_HOST_ALIASES or KIGO_GLOBAL_HOST_ALIASES for more names; see docs/operations.md)`
  const key = identityKey(config.secretKey)
  const seenRequestIds = new SeenRequestIds()
  const uploads = new ByteBudget(config.core.uploads.bytesInFlight, config.core.uploads.bytesInFlightPerUser)

  const app = Fastify({
    logger: options.logger ?? false,
    // Fastify's request lines off: the onResponse hook below writes the one line per request.
    ...requestLogging(),
    genReqId: (req) => {
      const given = req.headers['x-kigo-request-id']
      return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID()
    },
    // The router's own failures in the catalogue, never echoing the URL (request-edges.ts).
    frameworkErrors: frameworkErrors(sendError),
    clientErrorHandler,
  })

  // Every request object has this property from the start (one shape for all of them).
  app.decorateRequest('coreContext', null)
  closeSilentConnections(app)

  const deps: CoreDeps = { config, store: guardStore(options.store, app.log, options.metrics && ((operation) => options.metrics!.storeErrors.inc({ operation }))), profiles: undefined!, hosts }
  deps.profiles = new ProfileRefresher(deps.store)

  // Bodies: urlencoded (decoded strictly, see form-decoding.ts) and multipart only.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    // The gateway reads every form whole and signs its digest: a signed form without one
    // is not a body the gateway verified (docs/security.md#request-edges).
    const ctx = contextOf(request)
    // A form of "the authenticated user" is admitted once its body is read (preValidation):
    // its verified identity waits in pendingIdentity until then, and counts here too.
    if ((ctx.identity ?? ctx.pendingIdentity?.identity) && ctx.bodySha256 === undefined) {
      request.log.warn('signed form without a body digest')
      done(errors.unauthorized('invalid_identity', 'The identity of this request could not be verified'), undefined)
      return
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase()
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
      done(errors.unsupportedMedia('unsupported_charset', 'Parameters must be UTF-8'), undefined)
      return
    }
    try {
      done(null, new FormBody(decodeForm(body as Buffer)))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
  // A multipart body is read only where an operation takes one (api-route.ts); anywhere
  // else (404, 405) it is left unread.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null))

  // The hooks below run on every request: callback-style (a throw before `done` is
  // answered as an error, as a rejection would be), so that a request with nothing to wait
  // for makes no promises, and the route's config is read once (Fastify builds a new
  // routeOptions object on every read).
  app.addHook('onRequest', (request, reply, done) => {
    // RFC 9112 §3.2: one Host, or 400 (docs/security.md#request-edges).
    if (repeatedHost(request.raw.rawHeaders)) throw repeatedHostError()
    const ctx = contextOf(request)
    const url = request.raw.url ?? '/'
    // API answers depend on the requester: never cached (errors included).
    const api = url.startsWith('/api/')
    if (api) reply.header('cache-control', 'no-store')
    // The callback is known before the parameters are read, so that early errors are
    // wrapped too (docs/api.md#callback-and-body_formats); a query that cannot be decoded is reported later. A query
    // with neither `callback` nor a percent-escape cannot name one: it is not decoded here.
    const query = url.indexOf('?')
    if (query !== -1 && (url.includes('callback', query) || url.includes('%', query))) {
      try {
        const callbacks = decodeForm(queryBytes(url)).filter(([n]) => n === 'callback')
        if (callbacks.length === 1 && callbacks[0]![1] !== '') ctx.callback = callbacks[0]![1]
      } catch {
        // reported by the route
      }
    }
    // docs/gateway.md#forwarding: identity headers are believed only with a fresh, valid signature.
    const check = verifyIdentity(key, request.headers, { method: request.method, url, host: request.headers.host ?? '' }, config.core.identityMaxAgeSeconds)
    if (!check.ok) {
      request.log.warn({ reason: check.reason }, 'identity refused')
      throw errors.unauthorized('invalid_identity', 'The identity of this request could not be verified')
    }
    if (check.bodySha256 !== '') ctx.bodySha256 = check.bodySha256
    if (api) {
      // The gateway refuses what is not canonical; the core refuses it again.
      const canonical = canonicalPath(query === -1 ? url : url.slice(0, query))
      if (!canonical.ok) throw errors.badRequest('bad_path', canonical.reason)
      if (formatOfPath(url) === null) throw errors.notFound()
      ctx.deployment = deploymentOf(request.headers.host)
      if (!ctx.deployment) throw errors.badRequest('unknown_deployment', unknownDeployment)
    }
    const flags = routeOf(request)
    // A form of "the authenticated user" may run its `/{id}` form when the parameters name an
    // `id` (docs/api-differences.md#id-parameter): decided once the body is parsed.
    if (flags.operation?.byId !== undefined) {
      ctx.pendingIdentity = check
      return done()
    }
    admit(request, flags, flags.operation, check)
    done()
  })

  /** The identity of a request that runs `operation`, its replay check, and the need for one. */
  const admit = (request: FastifyRequest, flags: RouteConfig, operation: Operation | undefined, check: IdentityCheck & { ok: true }): void => {
    const ctx = contextOf(request)
    ctx.operation = operation
    ctx.identity = checkSignedOperation(check.identity, check.operation, operation, request.method, config.auth.routeMethods)
    // Every signed request runs once, reads included: a captured one replayed is refused.
    // A signed request without a request ID cannot be told from a replay: refused.
    if (check.signed && (check.requestId === null || !seenRequestIds.claim(check.requestId))) {
      request.log.warn('signed request replayed')
      throw errors.unauthorized('invalid_identity', 'The identity of this request could not be verified')
    }
    if (flags.api && operation !== undefined && !operation.anonymous && !ctx.identity) {
      throw errors.unauthorized('authentication_required', 'This operation requires authentication')
    }
  }

  // The deferred admission of a form of "the authenticated user": the operation its query
  // and urlencoded body make it (the gateway signed the one it chose the same way).
  app.addHook('preValidation', (request, _reply, done) => {
    const ctx = contextOf(request)
    const check = ctx.pendingIdentity
    if (check === undefined) return done()
    ctx.pendingIdentity = undefined
    const flags = routeOf(request)
    const url = request.raw.url ?? '/'
    const body = request.body instanceof FormBody ? request.body : undefined
    const operation = withIdParameter(operations, flags.operation!, () =>
      namesId(queryBytes(url).toString('latin1')) || (body !== undefined && body.pairs.some(([n, v]) => n === 'id' && v !== '')))
    admit(request, flags, operation, check)
    done()
  })

  // A multipart upload to an operation that takes one is bounded in bytes held and in time
  // (upload-guard.ts); a body whose digest the gateway signed is the body that runs
  // (docs/security.md#bodies-and-uploads).
  app.addHook('preParsing', (request, reply, payload, done) => {
    const ctx = contextOf(request)
    const expected = ctx.bodySha256
    // The multipart parser reads the request itself (and marks it only after this hook).
    if (/^\s*multipart\/form-data/i.test(request.headers['content-type'] ?? '')) {
      if (routeOf(request).operation?.method === 'POST') {
        ctx.upload = guardUpload(request, reply, ctx.identity?.user ?? '', { budget: uploads, timeoutMs: config.core.uploads.timeoutMs, retryAfterSeconds: uploadRetryAfterSeconds })
      }
      if (expected !== undefined) ctx.bodyCheck = tapBodyDigest(payload, expected)
      return done(null, payload)
    }
    if (expected === undefined) return done(null, payload)
    // Only forms are parsed here (anything else is 415 unread): read within the parsers' own limit.
    if (!/^\s*application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '')) return done(null, payload)
    verifiedBody(payload, expected, app.initialConfig.bodyLimit ?? 1024 * 1024).then((body) => done(null, body), done)
  })

  // docs/gateway.md#forwarding: the public profile copy follows the identity. A write whose client is gone
  // is not started, checked again after the refresh, which may have waited for the store.
  app.addHook('preHandler', (request, reply, done) => {
    if (stopIfClientGone(request, reply)) return done()
    const ctx = contextOf(request)
    const identity = ctx.identity
    const flags = routeOf(request)
    const refreshing = identity && flags.api && !flags.storesProfile ? deps.profiles.refresh(identity) : undefined
    if (refreshing === undefined) return done()
    refreshing.then(() => {
      stopIfClientGone(request, reply)
      done()
    }, done)
  })

  const metrics = options.metrics
  if (metrics) {
    // Label values are bounded: the route table's operation names (as the gateway labels
    // them, so the two can be joined), other routes' patterns, methods, status classes.
    app.addHook('onResponse', (request, reply, done) => {
      const route = routeOf(request)
      const operation = route.operation?.name ?? route.url ?? 'unmatched'
      const statusClass = `${Math.floor(reply.statusCode / 100)}xx`
      metrics.requests.series(operation, request.method, statusClass).inc()
      metrics.duration.series(operation).observe(reply.elapsedTime / 1000)
      done()
    })
  }

  // One line per request (docs/gateway.md#metrics asks the same of the gateway).
  const logger = app.log as { isLevelEnabled?: (level: string) => boolean }
  const logRequests = typeof logger.isLevelEnabled === 'function' && logger.isLevelEnabled('info')
  if (logRequests) app.addHook('onResponse', async (request, reply) => {
    const url = request.raw.url ?? ''
    const q = url.indexOf('?')
    const path = q === -1 ? url : url.slice(0, q)
    // Health checks (every few seconds from each orchestrator and balancer) at debug.
    const health = path === '/healthz' || path === '/readyz'
    request.log[health ? 'debug' : 'info'](
      {
        method: request.method,
        path,
        status: reply.statusCode,
        user: contextOf(request).identity?.user,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    )
  })

  // Failures in the request's format (docs/api.md#errors); a browser (Accept: text/html)
  // outside /api gets the 404 page, API clients the error in their format.
  void app.register(errorAnswers, {
    wording: coreWording,
    render: sendError,
    log: (request, reply, err, answer) => {
      // The client closed the connection mid-request (an aborted upload): nothing failed here.
      if (clientGone(request, reply)) request.log.info({ error: (err as Error).message, code: (err as FastifyError).code }, 'client closed the connection before the request was read')
      else if (answer.status >= 500 && !(err instanceof ApiError)) request.log.error({ err }, 'request failed')
    },
    notFound: (request, reply) => (wantsPage(request) && !request.url.startsWith('/api/') ? sendNotFoundPage(request, reply, deps) : sendError(request, reply, errors.notFound())),
  })

  healthRoutes(app, options.store)
  statusRoutes(app, deps)
  favoriteRoutes(app, deps)
  photoRoutes(app, deps)
  userRoutes(app)
  timelineRoutes(app, deps)
  followRoutes(app, deps)
  keywordRoutes(app, deps)
  pageRoutes(app, deps)
  return app
}
