// Login sites on the operator API (docs/login-api.md#operators): register, list, show,
// edit, rotate the secret (with an optional overlap, docs/login-api.md#rotating-the-secret),
// delete. Registered inside the operator API's token-protected scope; every change is
// audited like the other operator changes.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError, errors } from '../../common/errors.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { NotFound } from '../store/types.js'
import { InvalidInput } from '../store/validation.js'
import { siteKind, siteView } from './site-pages.js'
import { auditAction, rotateOnOperator } from '../registrations/lifecycle.js'
import type { LoginSiteStore } from './store.js'

export interface SitesAdminOptions {
  sites: LoginSiteStore
  audit?: Pick<AuditStore, 'record'>
  /** Clock in milliseconds (default Date.now): a rotated secret's overlap ends from it. */
  now?: () => number
}

const notFound = (key: string) => new ApiError(404, 'not_found', `No login site with api_key ${JSON.stringify(key)}`)
const invalid = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid request body: ${message}`)

/** A field that may be left out: absent, or a string (else 400 saying `what`). */
function optional(value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw invalid(what)
  return value
}

export async function sitesAdminApi(app: FastifyInstance, options: SitesAdminOptions): Promise<void> {
  const { sites } = options
  const audited = auditTrail(options.audit, app.log)
  app.answerErrorsAs(operatorErrorArea({
    known: (err) => (err instanceof NotFound ? new ApiError(404, 'not_found', err.message) : err instanceof InvalidInput ? invalid(err.message) : undefined),
    unavailable: () => errors.unavailable('store_unavailable', 'The identity store is unavailable; try again shortly'),
  }))
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.post('/admin/sites', { bodyLimit: 64 * 1024 }, async (request, reply) => {
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('expected a JSON object with name, owner and callback')
    const { name, owner, callback, ...rest } = body as Record<string, unknown>
    const extra = Object.keys(rest)
    if (extra.length > 0) throw invalid(`unknown field ${JSON.stringify(extra[0])}; a site has name, owner and callback`)
    if (typeof name !== 'string') throw invalid('name must be a string')
    if (typeof owner !== 'string') throw invalid('owner must be a user ID')
    if (typeof callback !== 'string') throw invalid('callback must be the http or https URL the sign-in returns to')
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

  app.get('/admin/sites', async (request) => {
    const owner = (request.query as Record<string, unknown>).owner
    if (owner !== undefined && typeof owner !== 'string') throw new ApiError(400, 'invalid_parameter', 'owner must be given once')
    return { sites: (await sites.list(owner)).map(siteView) }
  })

  const keyOf = (request: FastifyRequest) => (request.params as { key: string }).key

  app.get('/admin/sites/:key', async (request) => {
    const found = await sites.find(keyOf(request))
    if (!found) throw notFound(keyOf(request))
    return siteView(found)
  })

  // The operator corrects a registration: the fields given (at least one), checked as a
  // registration checks them; the api_key and secret stay.
  app.patch('/admin/sites/:key', { bodyLimit: 64 * 1024 }, async (request) => {
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('expected a JSON object with name, callback or home_page')
    const { name, callback, home_page: home, ...rest } = body as Record<string, unknown>
    const extra = Object.keys(rest)
    if (extra.length > 0) throw invalid(`unknown field ${JSON.stringify(extra[0])}; a site's name, callback and home_page can be changed`)
    if (name === undefined && callback === undefined && home === undefined) throw invalid('give name, callback or home_page')
    const newName = optional(name, 'name must be a string')
    const newCallback = optional(callback, 'callback must be the http or https URL the sign-in returns to')
    const newHome = home === null ? null : optional(home, 'home_page must be an http or https URL, or null')
    const found = await sites.find(keyOf(request))
    if (!found) throw notFound(keyOf(request))
    const edited = await sites.update(found.apiKey, { name: newName ?? found.name, callbackUrl: newCallback ?? found.callbackUrl, homeUrl: newHome === undefined ? found.homeUrl : newHome })
    if (!edited) throw notFound(keyOf(request))
    await audited(operatorActor(request), { kind: 'site', action: auditAction(siteKind, 'edit'), target: found.apiKey, before: siteView(edited.before), after: siteView(edited.after) })
    return siteView(edited.after)
  })

  // The optional body {"overlap_seconds": N} keeps the old secret working that long.
  // The optional body {"overlap_seconds": N} keeps the old secret working that long.
  app.post('/admin/sites/:key/rotate-secret', { bodyLimit: 64 * 1024 }, (request) => rotateOnOperator({
    kind: siteKind,
    request,
    id: keyOf(request),
    audited,
    rotate: async (overlapSeconds) => (await sites.rotateSecret(keyOf(request), { overlapSeconds, now: (options.now ?? Date.now)() })) ?? 'not_found',
    notFound: () => notFound(keyOf(request)),
    answer: (secret) => ({ api_key: keyOf(request), secret }),
  }))

  app.delete('/admin/sites/:key', async (request) => {
    const deleted = await sites.delete(keyOf(request))
    if (!deleted) throw notFound(keyOf(request))
    await audited(operatorActor(request), { kind: 'site', action: auditAction(siteKind, 'delete'), target: deleted.apiKey, before: siteView(deleted), after: null })
    return { deleted: true, api_key: deleted.apiKey, name: deleted.name }
  })
}
