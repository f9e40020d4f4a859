// The catch-all route (SPEC §4): every request is checked against the route table,
// authenticated by its route's rules, and forwarded unchanged to the core with a signed
// identity. Routes registered later with more specific paths (the provider) take theirs over.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { clientGone, isWrite } from '../../common/client-gone.js'
import type { DependencyWatch } from '../../common/dependency-watch.js'
import { errors } from '../../common/errors.js'
import { identityKey } from '../../common/identity.js'
import { canonicalPath } from '../../common/route-table.js'
import { registerForwarding, type ForwardContext } from '../proxy/forward.js'
import { routeResolver } from '../domain/routes.js'
import { bodyDigest } from './authentication.js'
import { sendError } from './errors.js'

export interface ForwardingOptions {
  config: Config
  /** Logs the start and end of a core outage (forwards refused or timed out). */
  coreWatch?: Pick<DependencyWatch, 'failed' | 'succeeded'>
}

async function forwarding(app: FastifyInstance, { config, coreWatch }: ForwardingOptions): Promise<void> {
  const resolveRoute = routeResolver(config.auth.routeMethods)
  const forward = await registerForwarding(app, {
    coreUrl: config.gateway.coreUrl,
    timeoutMs: config.gateway.coreTimeoutMs,
    identityKey: identityKey(config.secretKey),
    stripCredentials: config.gateway.stripCredentials,
    ...(coreWatch ? { watch: coreWatch } : {}),
  })

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
    } else {
      const decision = await app.gatewayAuth(request, route)
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
    const origin = app.publicOrigin(request)
    const context: ForwardContext = {
      identity,
      host: origin.host,
      scheme: origin.scheme,
      clientIp: origin.ip,
      operation: route.operation?.name ?? '',
      bodySha256: bodyDigest(request),
      stripCredentials: readsOnly,
    }
    request.upstreamStartedAt = process.hrtime.bigint()
    return forward(request, reply, context)
  }

  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/*', handler })
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/', handler })
}

export default fp(forwarding, {
  name: 'kigo-forwarding',
  fastify: '5.x',
  dependencies: ['kigo-body-parsers', 'kigo-gateway-errors', 'kigo-request-log', 'kigo-origin', 'kigo-authentication'],
})
