// OAuth 1.0a as one feature of the gateway (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// its tables' later migrations, its store, its operator API (applications and access
// tokens) and its account pages (an application's page, registration, edit, rotation,
// deletion). Shaped as the gateway's feature contract: `open` takes the host's services
// and gives back what the feature adds. The verifiers (auth/oauth/) read applications and
// tokens through the cached credential lookup (store/credential-lookup.ts), which any
// CredentialRepository serves, so the hot request path does not go through this module.
import type { FastifyInstance } from 'fastify'
import type { Migration } from '../../common/sql.js'
import type { AdminRouteOptions } from '../registrations/admin-routes.js'
import { adminApps } from './admin-apps.js'
import { adminTokens } from './admin-tokens.js'
import { oauth1Migrations } from './migrations.js'

import { SqlOAuth1Store } from './store.js'
import type { ApplicationStoreFactory } from '../store/index.js'

export { SqlOAuth1Store } from './store.js'
export type { OAuth1Store } from './types.js'
export { registerApplications } from './application-pages.js'

/** What the feature is given: the operator API's route options (its store is the identity store, which keeps this feature's store as `oauth1`). */
export interface OAuth1Shared {
  adminRoutes: AdminRouteOptions
}

/** What opening the feature gives: its routes on the operator app. */
export interface OAuth1Contribution {
  /** The applications and access tokens of the operator API, registered in the host's token-protected scope (its validator and error answers). */
  operatorRoutes: (app: FastifyInstance) => Promise<void>
}

/** The operator API's applications and access tokens on `app`, given the operator API's route options. */
export const oauth1OperatorRoutes = (options: AdminRouteOptions) => async (app: FastifyInstance): Promise<void> => {
  await app.register(adminApps, options)
  await app.register(adminTokens, options)
}

/** The feature's store, opened on the identity store's database (its `applications`). */
export const oauth1Store: ApplicationStoreFactory = (base) => new SqlOAuth1Store(base)

export const oauth1Feature: { name: string; migrations: readonly Migration[]; open(shared: OAuth1Shared): OAuth1Contribution } = {
  name: 'oauth1',
  migrations: oauth1Migrations,
  open: (shared) => ({ operatorRoutes: oauth1OperatorRoutes(shared.adminRoutes) }),
}
