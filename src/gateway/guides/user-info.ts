// The user-information API (docs/gateway.md#the-oauth-provider-and-the-account-pages, docs/gateway.md#which-credentials-each-operation-accepts): `GET /applications/my.{format}`, OAuth only,
// any scope; it replaces the retired login API. The gateway answers it from its own
// identity store; errors are in the path's format (docs/api.md#errors).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { formatOfPath, isValidCallback, render } from '../../common/formats.js'
import { sendError } from '../../common/api-errors.js'
import { routePolicyOf } from '../domain/routes.js'
import type { GuidesContext } from './context.js'

export function registerUserInfo(app: FastifyInstance, ctx: GuidesContext): void {
  const { config } = ctx
  const policy = routePolicyOf('applications/my', config.auth.routeMethods)

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const format = formatOfPath(request.url)
    if (format === null) return sendError(request, reply, errors.notFound('not_found', 'Unknown format; use .json or .xml'))
    const callback = format === 'json' ? (request.query as Record<string, unknown>).callback : undefined
    if (callback !== undefined && (typeof callback !== 'string' || (callback !== '' && !isValidCallback(callback)))) {
      return sendError(request, reply, errors.badRequest('bad_callback', 'callback must be a JavaScript identifier path of at most 128 characters'))
    }
    const decision = await app.gatewayAuth(request, policy)
    if (!decision.ok) return sendError(request, reply, decision.error)
    const identity = decision.identity!
    // Links name the deployment's main host (docs/api.md), whichever alias was asked.
    const base = request.deployment!.baseUrl
    const body = {
      url_name: identity.user,
      display_name: identity.userName,
      profile_image_url: `${base}/users/${encodeURIComponent(identity.user)}/profile.png`,
    }
    const out = render(format, 'user', body, body, typeof callback === 'string' ? callback : undefined)
    for (const [k, v] of Object.entries(out.headers)) void reply.header(k, v)
    return reply.code(200).header('cache-control', 'private, no-store').type(out.contentType).send(out.body)
  }

  app.get('/applications/my', handler)
  app.get('/applications/my.:format', handler)
  app.route({
    method: ['POST', 'PUT', 'DELETE', 'PATCH'],
    url: '/applications/my.:format',
    handler: (request, reply) => sendError(request, reply, errors.methodNotAllowed(['GET', 'HEAD'])),
  })
  app.route({
    method: ['POST', 'PUT', 'DELETE', 'PATCH'],
    url: '/applications/my',
    handler: (request, reply) => sendError(request, reply, errors.methodNotAllowed(['GET', 'HEAD'])),
  })
}
