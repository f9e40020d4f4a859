// The signed identity (docs/gateway.md#forwarding): identity headers are believed only with a
// fresh, valid signature of the gateway, for the operation the gateway chose, once. An API
// path must be canonical, in a known format, on a deployment's host. The request is then
// admitted to its operation: at once, or, for a form of "the authenticated user" that may
// run its `/{id}` form (docs/api-differences.md#id-parameter), once its body is parsed.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../../common/config.js'
import { errors } from '../../common/errors.js'
import { formatOfPath } from '../../common/formats.js'
import { identityKey, verifyIdentity, type IdentityCheck } from '../../common/identity.js'
import { canonicalPath, namesId, operations, withIdParameter, type Operation } from '../../common/route-table.js'
import { deploymentMatcher, unknownDeploymentMessage, type Hosts } from '../../common/deployment.js'
import { contextOf, routeOf, type RouteConfig } from '../routes/context.js'
import { queryBytes } from '../routes/form-decoding.js'
import { checkSignedOperation, SeenRequestIds } from '../routes/identity-guard.js'
import { FormBody } from '../routes/params.js'

export interface IdentityOptions {
  config: Config
  hosts: Hosts
}

const refused = () => errors.unauthorized('invalid_identity', 'The identity of this request could not be verified')

async function identity(app: FastifyInstance, { config, hosts }: IdentityOptions): Promise<void> {
  const deploymentOf = deploymentMatcher(hosts)
  const unknownDeployment = unknownDeploymentMessage(hosts)
  const key = identityKey(config.secretKey)
  const seenRequestIds = new SeenRequestIds()

  /** The identity of a request that runs `operation`, its replay check, and the need for one. */
  const admit = (request: FastifyRequest, flags: RouteConfig, operation: Operation | undefined, check: IdentityCheck & { ok: true }): void => {
    const ctx = contextOf(request)
    ctx.operation = operation
    ctx.identity = checkSignedOperation(check.identity, check.operation, operation, request.method, config.auth.routeMethods)
    // Every signed request runs once, reads included: a captured one replayed is refused.
    // A signed request without a request ID cannot be told from a replay: refused.
    if (check.signed && (check.requestId === null || !seenRequestIds.claim(check.requestId))) {
      request.log.warn('signed request replayed')
      throw refused()
    }
    if (flags.api && operation !== undefined && !operation.anonymous && !ctx.identity) {
      throw errors.unauthorized('authentication_required', 'This operation requires authentication')
    }
  }

  // Callback-style, and the route's config read once (Fastify builds a new routeOptions
  // object on every read): this runs on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    const ctx = contextOf(request)
    const url = request.raw.url ?? '/'
    const check = verifyIdentity(key, request.headers, { method: request.method, url, host: request.headers.host ?? '' }, config.core.identityMaxAgeSeconds)
    if (!check.ok) {
      request.log.warn({ reason: check.reason }, 'identity refused')
      throw refused()
    }
    if (check.bodySha256 !== '') ctx.bodySha256 = check.bodySha256
    if (check.signed) ctx.signedOperation = check.operation
    if (url.startsWith('/api/')) {
      // The gateway refuses what is not canonical; the core refuses it again.
      const query = url.indexOf('?')
      const canonical = canonicalPath(query === -1 ? url : url.slice(0, query))
      if (!canonical.ok) throw errors.badRequest('bad_path', canonical.reason)
      if (formatOfPath(url) === null) throw errors.notFound()
      ctx.deployment = deploymentOf(request.headers.host)
      if (!ctx.deployment) throw errors.badRequest('unknown_deployment', unknownDeployment)
    }
    const flags = routeOf(request)
    // Whether the `/{id}` form runs is decided once the body is parsed (preValidation).
    if (flags.operation?.byId !== undefined) {
      ctx.pendingIdentity = check
      return done()
    }
    admit(request, flags, flags.operation, check)
    done()
  })

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
}

export default fp(identity, { name: 'kigo-core-identity', fastify: '5.x', dependencies: ['kigo-core-formats'] })
