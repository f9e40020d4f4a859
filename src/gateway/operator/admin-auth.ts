// Bearer authentication for the operator surface (docs/gateway.md#the-operator-api-and-dashboard): every request under
// `/admin` must carry `Authorization: Bearer <KIGO_ADMIN_TOKEN>` (RFC 6750 §2.1).
// The check is a plain function so that other admin entry points (a dashboard login,
// for example) can reuse it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { renderError } from '../../common/formats.js'
import { safeEqual } from '../../common/secrets.js'

export const adminRealm = 'kigo-admin'
export const adminChallenge = `Bearer realm="${adminRealm}"`

export interface AdminAuthOptions {
  /** The operator bearer token (config.adminToken). */
  adminToken: string
  /** Path prefix guarded by the token; default `/admin`. */
  prefix?: string
}

/**
 * The token of an `Authorization: Bearer …` header, or null. The scheme name is
 * case-insensitive (RFC 9110 §11.1). RFC 6750 §2.1 limits tokens to b64token syntax, but
 * an operator-chosen KIGO_ADMIN_TOKEN may hold other visible characters, so any
 * non-blank token is taken and compared.
 */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null
  const match = /^Bearer +(\S+) *$/i.exec(header)
  return match ? match[1]! : null
}

/** True when the request carries the operator bearer token; compared in constant time. */
export function hasAdminBearer(request: FastifyRequest, adminToken: string): boolean {
  const token = bearerToken(request.headers.authorization)
  if (token === null || adminToken === '') return false
  return safeEqual(token, adminToken)
}

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + '/')
}

/**
 * Whether the request targets the guarded prefix: by its raw path, and by the route the
 * router matched (which also covers percent-encoded or otherwise normalised spellings).
 */
export function isAdminPath(request: FastifyRequest, prefix = '/admin'): boolean {
  const raw = request.url
  const q = raw.indexOf('?')
  const path = q === -1 ? raw : raw.slice(0, q)
  const route = request.routeOptions.url
  return underPrefix(path, prefix) || (route !== undefined && underPrefix(route, prefix))
}

/** The 401 answer: JSON error body and the Bearer challenge (RFC 6750 §3). */
export function sendAdminUnauthorized(reply: FastifyReply, message: string): FastifyReply {
  const body = renderError('json', { status: 401, code: 'unauthorized', message })
  return reply
    .code(401)
    .header('www-authenticate', adminChallenge)
    .header('cache-control', 'no-store')
    .type(body.contentType)
    .send(body.body)
}

async function adminAuthPlugin(app: FastifyInstance, options: AdminAuthOptions): Promise<void> {
  const prefix = options.prefix ?? '/admin'
  app.addHook('onRequest', async (request, reply) => {
    if (!isAdminPath(request, prefix)) return
    if (hasAdminBearer(request, options.adminToken)) return
    const message = request.headers.authorization === undefined
      ? 'The operator API requires Authorization: Bearer <admin token>'
      : 'The admin token is not valid'
    return sendAdminUnauthorized(reply, message)
  })
}

export const adminAuth = fp(adminAuthPlugin, { name: 'kigo-admin-auth', fastify: '5.x' })
export default adminAuth
