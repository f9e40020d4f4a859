// Login sites on the operator API (docs/login-api.md#operators): register, list, show,
// edit, rotate the secret (with an optional overlap, docs/login-api.md#rotating-the-secret),
// delete, as every registered client's (registrations/operator-routes.ts). Registered
// inside the operator API's token-protected scope; every change is audited like the
// other operator changes.
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import type { AuditStore } from '../audit/store.js'
import { siteKind, siteView } from './site-pages.js'
import { UserId } from '../registrations/admin-routes.js'
import { registerOperatorRegistrations } from '../registrations/operator-routes.js'
import type { LoginSiteStore } from './store.js'

export interface SitesAdminOptions {
  sites: LoginSiteStore
  audit?: Pick<AuditStore, 'record'>
  /** Clock in milliseconds (default Date.now): a rotated secret's overlap ends from it. */
  now?: () => number
}

// The name and URLs are strings here; the store checks them as a registration does (its
// length, an http or https URL) and says which one it refused.
const SiteName = Type.String()
const SiteUrl = Type.String()
const CreateSiteBody = Type.Object(
  { name: SiteName, owner: UserId, callback: SiteUrl },
  { additionalProperties: false },
)
// What may be edited after registration: any of these (at least one); home_page null clears it.
const EditSiteBody = Type.Object(
  { name: Type.Optional(SiteName), callback: Type.Optional(SiteUrl), home_page: Type.Optional(Type.Union([SiteUrl, Type.Null()])) },
  { additionalProperties: false, minProperties: 1, errorMessage: 'must give name, callback or home_page' },
)

export async function sitesAdminApi(instance: FastifyInstance, options: SitesAdminOptions): Promise<void> {
  const { sites } = options
  registerOperatorRegistrations(instance, {
    kind: siteKind,
    collection: '/admin/sites',
    listField: 'sites',
    param: 'key',
    audit: options.audit,
    unavailable: 'The identity store is unavailable; try again shortly',
    createBody: CreateSiteBody,
    editBody: EditSiteBody,
    async create({ name, owner, callback }) {
      const created = await sites.create({ name, ownerId: owner, callbackUrl: callback })
      return { item: created.site, secret: created.secret }
    },
    list: (owner) => sites.list(owner),
    find: (key) => sites.find(key),
    update: (found, { name, callback, home_page: home }) => sites.update(found.apiKey, { name: name ?? found.name, callbackUrl: callback ?? found.callbackUrl, homeUrl: home === undefined ? found.homeUrl : home }),
    rotate: async (key, overlapSeconds) => (await sites.rotateSecret(key, { overlapSeconds, now: (options.now ?? Date.now)() })) ?? 'not_found',
    async remove(key) {
      const deleted = await sites.delete(key)
      return deleted && { before: siteView(deleted), answer: { deleted: true, api_key: deleted.apiKey, name: deleted.name } }
    },
    view: siteView,
    secretFields: (key, secret) => ({ api_key: key, secret }),
    idOf: (site) => site.apiKey,
    notFound: (key) => new ApiError(404, 'not_found', `No login site with api_key ${JSON.stringify(key)}`),
    refusedInput: (err) => new ApiError(400, 'invalid_parameter', `Invalid request body: ${err.message}`),
  })
}
