// OAuth 1.0a's part of the operator API (docs/gateway.md#the-operator-api-and-dashboard):
// the applications and their access tokens, in a scope of the identity administration
// (its strict validator, the identity store's refusals as answers, no caching).
import type { FastifyInstance } from 'fastify'
import { identityAdminScope, type AdminApiOptions } from '../operator/admin-api.js'
import { adminApps } from './admin-apps.js'
import { adminTokens } from './admin-tokens.js'

export async function oauth1AdminApi(app: FastifyInstance, options: AdminApiOptions): Promise<void> {
  const routes = identityAdminScope(app, options)
  await app.register(adminApps, routes)
  await app.register(adminTokens, routes)
}
