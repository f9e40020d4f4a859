// The catch-all route (docs/gateway.md#authentication): every request is checked against the route table,
// authenticated by its route's rules, and forwarded unchanged to the core with a signed
// identity. Routes registered later with more specific paths (the provider) take theirs over.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { clientGone, isWrite } from '../../common/client-gone.js'
import type { WatchedCalls } from '../../common/dependency-watch.js'
import type { AppTracing } from '../../common/tracing.js'
import { withDeadline } from '../../common/deadline.js'
import { errors } from '../../common/errors.js'
import { identityKey, type Identity } from '../../common/identity.js'
import type { Deployment } from '../../common/deployment.js'
import { wantsPage } from '../../common/site-page.js'
import type { User } from '../store/types.js'
import { canonicalPath, namesId } from '../../common/route-table.js'
import { registerForwarding, type ForwardContext } from '../proxy/forward.js'
import { routeResolver, type Resolution, type RoutePolicy } from '../domain/routes.js'
import type { AuthDecision } from '../auth/authenticate.js'
import { bodyDigest } from './authentication.js'
import { gateBodyHash } from '../proxy/body-hash-gate.js'
import { challenges } from '../auth/authenticate.js'
import { Readable } from 'node:stream'
import { sendError } from '../../common/api-errors.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request path as the gateway and the core both read it (route-table.ts canonicalPath), set before the body is read. */
    canonicalPath: string | null
    /** The route the path and the method name, found with canonicalPath (an operation or outside the table). */
    pathRoute: Exclude<Resolution, { kind: 'method_not_allowed' }> | null
  }
}

export interface ForwardingOptions {
  config: Config
  /** Logs the start and end of a core outage (forwards refused or timed out). */
  coreWatch?: WatchedCalls
  /** The forward as a client span, its trace context sent to the core (docs/operations.md#traces). */
  tracing?: Pick<AppTracing, 'forward'>
  /**
   * The signed-in user a Cookie header's account session names at a deployment
   * (account-area/session.ts signedInReader), so that a public page names its reader.
   * Absent without the account area: every page is then forwarded as anonymous.
   */
  reader?: (cookieHeader: string, deployment: Deployment) => Promise<User | null>
}

/** The query of a request target whose `?` is at `q`, up to a `#`, as the core reads it (form-decoding.ts queryBytes). */
function queryOf(url: string, q: number): string {
  const hash = url.indexOf('#', q)
  return url.slice(q + 1, hash === -1 ? undefined : hash)
}

async function forwarding(app: FastifyInstance, { config, coreWatch, tracing, reader }: ForwardingOptions): Promise<void> {
  const resolveRoute = routeResolver(config.auth.routeMethods)
  const forward = registerForwarding(app, {
    coreUrl: config.gateway.coreUrl,
    timeoutMs: config.gateway.coreTimeoutMs,
    identityKey: identityKey(config.secretKey),
    stripCredentials: config.gateway.stripCredentials,
    ...(coreWatch ? { watch: coreWatch } : {}),
    ...(tracing ? { trace: tracing.forward } : {}),
  })

  /**
   * The reader a browser's read of a public page names by its account session, or null
   * when there is none to look up. Only a page (Accept: text/html) with the session's
   * cookie costs a look-up; an API request, an image or a visitor costs nothing. The
   * cookie stays here: the core is told the user, signed as any identity is, with the
   * method `session`, which it shows on a page and never runs an operation for. A store
   * that cannot answer leaves the page to be read signed out, rather than not at all.
   */
  const pageReader = (request: FastifyRequest): Promise<Identity | null> | null => {
    const cookie = request.headers.cookie
    if (reader === undefined || cookie === undefined || !wantsPage(request)) return null
    const deployment = app.deploymentOf(request)?.name
    if (deployment === undefined) return null
    // Within the request deadline, as a credential check is: a store that hangs leaves the
    // page signed out instead of holding it.
    return withDeadline(reader(cookie, deployment), config.dependencies.requestDeadlineMs, 'account session').then(
      (user) => user && { user: user.id, userName: user.name, authMethod: 'session', consumer: '', scopes: [] },
      (err: Error) => {
        request.log.warn({ error: err.message }, 'the account session could not be read; the page is forwarded signed out')
        return null
      },
    )
  }

  /** Forwards a request whose route allows it, with the identity its decision carries (for a page, its reader's). */
  const forwardDecided = (request: FastifyRequest, reply: FastifyReply, route: RoutePolicy, decision: AuthDecision, page: boolean): void => {
    if (!decision.ok) return void sendError(request, reply, decision.error)
    // Deprecation, Sunset and Link of the migration policy (docs/gateway.md#the-migration-policy) on an accepted
    // legacy request; the core sends none of these, so the forwarded response keeps them.
    if (decision.headers) void reply.headers(decision.headers)
    // Verification may have waited for a slow dependency; a client that gave up meanwhile
    // gets no write made on its behalf.
    if (isWrite(request.method) && clientGone(request, reply)) {
      request.log.info({ route: route.name }, 'client closed the connection before the request was forwarded; not forwarded')
      return void reply.hijack()
    }
    const looking = page && decision.identity === null ? pageReader(request) : null
    if (looking !== null) return void looking.then((identity) => send(request, reply, route, identity, false)).catch((err: Error) => void reply.send(err))
    send(request, reply, route, decision.identity, false)
  }

  const send = (request: FastifyRequest, reply: FastifyReply, route: RoutePolicy, identity: ForwardContext['identity'], stripCredentials: boolean): void => {
    const origin = app.publicOrigin(request)
    // A streamed body under oauth_body_hash goes to the core through the hash check.
    if (request.bodyHash !== null && request.body instanceof Readable) {
      request.body = gateBodyHash(request.body, request.bodyHash, () => errors.unauthorized('signature_invalid', 'oauth_body_hash does not match the body', {
        'www-authenticate': challenges(config.auth.realm, ['oauth'], { oauth_problem: 'signature_invalid' }),
      }))
    }
    request.upstreamStartedAt = process.hrtime.bigint()
    forward(request, reply, {
      identity,
      host: origin.host,
      scheme: origin.scheme,
      clientIp: origin.ip,
      operation: route.operation?.name ?? '',
      bodySha256: bodyDigest(request),
      stripCredentials,
    })
  }

  // Refused before a byte of the body is read (docs/security.md#bodies-and-uploads): what
  // the path and the method alone decide. One reading of the path for the gateway and the
  // core (route-table.ts): a path two parsers could read differently is refused before
  // anything else is done with it; a method the path's operation does not have is 405;
  // under /api/ only the table's operations exist, so anything else is 404, whoever asks.
  // None of these depends on the body (an `id` in a form picks between two forms of one
  // operation, never whether it exists), so a form sent to them is never read.
  const catchAll = new Set(['/*', '/'])
  app.decorateRequest('canonicalPath', null)
  app.decorateRequest('pathRoute', null)
  app.addHook('onRequest', (request, reply, done) => {
    if (!catchAll.has(request.routeOptions.url ?? '')) return done()
    const q = request.url.indexOf('?')
    const canonical = canonicalPath(q === -1 ? request.url : request.url.slice(0, q))
    if (!canonical.ok) return void sendError(request, reply, errors.badRequest('bad_path', canonical.reason))
    const resolution = resolveRoute(request.method, canonical.path)
    if (resolution.kind === 'method_not_allowed') {
      if (request.method === 'OPTIONS') return void reply.code(204).header('allow', [...resolution.allow, 'OPTIONS'].join(', ')).send()
      return void sendError(request, reply, errors.methodNotAllowed(resolution.allow))
    }
    if (resolution.kind === 'other' && canonical.path.startsWith('/api/')) return void sendError(request, reply, errors.notFound())
    request.canonicalPath = canonical.path
    request.pathRoute = resolution
    done()
  })

  // Callback-style: the answer is sent by the forward or the error, never by a returned
  // value, so a request with nothing to verify makes no promise at all.
  const handler = (request: FastifyRequest, reply: FastifyReply): void => {
    const q = request.url.indexOf('?')
    // `?id=` (or `id` in an urlencoded body) turns a form of "the authenticated user" into
    // the `/{id}` read (docs/api-differences.md#id-parameter); the core reads it the same way.
    const namesAnId = () => (q !== -1 && namesId(queryOf(request.url, q))) || (Buffer.isBuffer(request.body) && namesId(request.body.toString('latin1')))
    // The onRequest hook above found the route, and refused every path and method it does
    // not name one for; only an operation with an `/{id}` form is looked up again, now
    // that the query and the body are known.
    const found = request.pathRoute!
    const resolution = found.kind === 'operation' && found.route.operation?.byId !== undefined ? resolveRoute(request.method, request.canonicalPath!, namesAnId) : found
    if (resolution.kind === 'method_not_allowed') throw new Error('a refused method reached the forwarding handler')
    const route = resolution.route
    // Outside the table (pages, icons, photo bytes), only reads carry an identity; any other
    // method is forwarded as anonymous, its credentials removed unread.
    if (resolution.kind === 'other' && request.method !== 'GET' && request.method !== 'HEAD') {
      request.routeName = route.name
      return send(request, reply, route, null, true)
    }
    const decided = app.gatewayAuth(request, route)
    const page = resolution.kind === 'other'
    if (decided instanceof Promise) decided.then((d) => forwardDecided(request, reply, route, d, page)).catch((err: Error) => void reply.send(err))
    else forwardDecided(request, reply, route, decided, page)
  }

  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/*', handler })
  app.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url: '/', handler })
}

export default fp(forwarding, {
  name: 'kigo-forwarding',
  fastify: '5.x',
  dependencies: ['kigo-body-parsers', 'kigo-error-answers', 'kigo-request-log', 'kigo-origin', 'kigo-authentication'],
})
