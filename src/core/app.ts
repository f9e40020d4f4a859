// The core application (docs/api.md): the public API behind the gateway, the photo service
// and the profile icons. Built here, listened on by server.ts only.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Config } from '../common/config.js'
import type { AppTracing } from '../common/tracing.js'
import { classifyFailure, errors, type FailureWording } from '../common/errors.js'
import { closeSilentConnections } from '../common/client-deadlines.js'
import { clientGone } from '../common/client-gone.js'
import errorAnswers from '../common/error-answers.js'
import requestLog from '../common/request-log.js'
import { requestLogging } from '../common/request-logger.js'
import { clientErrorHandler, frameworkErrors } from '../common/request-edges.js'
import { hostsOf, type Hosts } from '../common/deployment.js'
import type { ContentStore } from './store/types.js'
import { observeRequest, type CoreMetrics } from './metrics.js'
import bodies from './plugins/bodies.js'
import formats from './plugins/formats.js'
import identity from './plugins/identity.js'
import profiles from './plugins/profiles.js'
import { coreRequestLog } from './plugins/request-log.js'
import { areas, bodyRoutes, health } from './plugins/routes.js'
import { sendError } from './routes/context.js'
import type { CoreDeps } from './routes/deps.js'
import { sendNotFoundPage, wantsPage } from './routes/pages.js'
import { ProfileRefresher } from './routes/profiles.js'
import { guardStore } from './routes/store-guard.js'

export interface CoreAppOptions {
  config: Config
  store: ContentStore
  /** Fastify's `logger` option: false (default) for none, true or pino options. */
  logger?: FastifyServerOptions['logger']
  /** Where requests and store failures are counted (src/core/metrics.ts). */
  metrics?: CoreMetrics
  /** Server spans (docs/operations.md#traces), when tracing is on. */
  tracing?: AppTracing
}

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

export function buildCoreApp(options: CoreAppOptions): FastifyInstance {
  const { config } = options
  const hosts: Hosts = hostsOf(config)
  const app = Fastify({
    logger: options.logger ?? false,
    // Fastify's request lines off: the request-log plugin below writes the one line per request.
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
  // First, so that every other hook and the request's log line run in its span.
  if (options.tracing) void app.register(options.tracing.serverSpans)
  closeSilentConnections(app)

  const store = guardStore(options.store, app.log, options.metrics && ((operation) => options.metrics!.storeErrors.inc({ operation })))
  const deps: CoreDeps = { config, store, profiles: new ProfileRefresher(store), hosts }

  // Each concern is a named plugin (src/core/plugins/) that declares what it needs; the
  // order below is the order of their hooks: formats, then identity, bodies and profiles.
  void app.register(formats)
  void app.register(identity, { config, hosts })
  void app.register(bodies, { config })
  void app.register(profiles, { profiles: deps.profiles })
  void app.register(requestLog, coreRequestLog(options.metrics && observeRequest(options.metrics)))

  // Failures in the request's format (docs/api.md#errors); a browser (Accept: text/html)
  // outside /api gets the 404 page, API clients the error in their format.
  void app.register(errorAnswers, {
    wording: coreWording,
    render: sendError,
    log: (request, reply, err) => {
      // The client closed the connection mid-request (an aborted upload): nothing failed here.
      if (clientGone(request, reply)) request.log.info({ error: (err as Error).message, code: (err as FastifyError).code }, 'client closed the connection before the request was read')
      // An outage is logged where it starts and ends (dependency-watch.ts); a fault with its stack.
      else if (classifyFailure(err).kind === 'fault') request.log.error({ err }, 'request failed')
    },
    notFound: (request, reply) => (wantsPage(request) && !request.url.startsWith('/api/') ? sendNotFoundPage(request, reply, deps) : sendError(request, reply, errors.notFound())),
  })

  void app.register(health, { store: options.store })
  for (const routes of areas) void app.register(routes, deps)
  void app.register(bodyRoutes)
  return app
}
