// Login sites on the operator API (docs/login-api.md#operators): register, list, show,
// edit, rotate the secret (with an optional overlap, docs/login-api.md#rotating-the-secret),
// delete. Registered inside the operator API's token-protected scope; every change is
// audited like the other operator changes.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError, errors } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { NotFound } from '../store/types.js'
import { InvalidInput } from '../store/validation.js'
import { siteKind, siteView } from './site-pages.js'
import { auditAction, rotateOnOperator } from '../registrations/lifecycle.js'
import { bodyLimit, Key, UserId } from '../registrations/admin-routes.js'
import { strictValidatorCompiler } from '../registrations/route-schemas.js'
import type { LoginSiteStore } from './store.js'

export interface SitesAdminOptions {
  sites: LoginSiteStore
  audit?: Pick<AuditStore, 'record'>
  /** Clock in milliseconds (default Date.now): a rotated secret's overlap ends from it. */
  now?: () => number
}

const notFound = (key: string) => new ApiError(404, 'not_found', `No login site with api_key ${JSON.stringify(key)}`)
const invalid = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid request body: ${message}`)

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
const SitesQuery = Type.Object({ owner: Type.Optional(UserId) }, { additionalProperties: false })
const SiteParams = Type.Object({ key: Key })

export async function sitesAdminApi(instance: FastifyInstance, options: SitesAdminOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const { sites } = options
  app.setValidatorCompiler(strictValidatorCompiler)
  const audited = auditTrail(options.audit, app.log)
  app.answerErrorsAs(operatorErrorArea({
    known: (err) => (err instanceof NotFound ? new ApiError(404, 'not_found', err.message) : err instanceof InvalidInput ? invalid(err.message) : undefined),
    unavailable: () => errors.unavailable('store_unavailable', 'The identity store is unavailable; try again shortly'),
  }))
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.post('/admin/sites', { bodyLimit, schema: { body: CreateSiteBody } }, async (request, reply) => {
    const { name, owner, callback } = request.body
    let created
    try {
      created = await sites.create({ name, ownerId: owner, callbackUrl: callback })
    } catch (err) {
      if (err instanceof NotFound) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(owner)}`)
      throw err
    }
    await audited(operatorActor(request), { kind: 'site', action: auditAction(siteKind, 'create'), target: created.site.apiKey, before: null, after: siteView(created.site) })
    return reply.code(201).send({ ...siteView(created.site), secret: created.secret })
  })

  app.get('/admin/sites', { schema: { querystring: SitesQuery } }, async (request) => {
    return { sites: (await sites.list(request.query.owner)).map(siteView) }
  })

  app.get('/admin/sites/:key', { schema: { params: SiteParams } }, async (request) => {
    const found = await sites.find(request.params.key)
    if (!found) throw notFound(request.params.key)
    return siteView(found)
  })

  // The operator corrects a registration: the fields given (at least one), checked as a
  // registration checks them; the api_key and secret stay.
  app.patch('/admin/sites/:key', { bodyLimit, schema: { params: SiteParams, body: EditSiteBody } }, async (request) => {
    const key = request.params.key
    const { name, callback, home_page: home } = request.body
    const found = await sites.find(key)
    if (!found) throw notFound(key)
    const edited = await sites.update(found.apiKey, { name: name ?? found.name, callbackUrl: callback ?? found.callbackUrl, homeUrl: home === undefined ? found.homeUrl : home })
    if (!edited) throw notFound(key)
    await audited(operatorActor(request), { kind: 'site', action: auditAction(siteKind, 'edit'), target: found.apiKey, before: siteView(edited.before), after: siteView(edited.after) })
    return siteView(edited.after)
  })

  // The optional body {"overlap_seconds": N} keeps the old secret working that long.
  app.post('/admin/sites/:key/rotate-secret', { bodyLimit, schema: { params: SiteParams } }, (request) => rotateOnOperator({
    kind: siteKind,
    request,
    id: request.params.key,
    audited,
    rotate: async (overlapSeconds) => (await sites.rotateSecret(request.params.key, { overlapSeconds, now: (options.now ?? Date.now)() })) ?? 'not_found',
    notFound: () => notFound(request.params.key),
    answer: (secret) => ({ api_key: request.params.key, secret }),
  }))

  app.delete('/admin/sites/:key', { schema: { params: SiteParams } }, async (request) => {
    const deleted = await sites.delete(request.params.key)
    if (!deleted) throw notFound(request.params.key)
    await audited(operatorActor(request), { kind: 'site', action: auditAction(siteKind, 'delete'), target: deleted.apiKey, before: siteView(deleted), after: null })
    return { deleted: true, api_key: deleted.apiKey, name: deleted.name }
  })
}
