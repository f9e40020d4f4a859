// The operator API for OpenID Connect (docs/oidc.md#by-the-operator), on the operator port
// behind the admin token: relying parties (`kigo oidc-clients …`) and the signing key
// (`kigo oidc rotate-key`). Every change is audited; a client secret appears only in the
// answer that creates or rotates it. A rotation takes an optional overlap
// (docs/oidc.md#rotating-the-client-secret).
import type { FastifyInstance } from 'fastify'
import { ApiError, errors } from '../../common/errors.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { isoSeconds } from '../../common/time.js'
import { userIdPattern } from '../domain/identifiers.js'
import { InvalidInput, refused } from '../store/validation.js'
import { NotFound } from '../store/types.js'
import type { OidcClient, OidcStore } from './store.js'
import type { OidcProviders } from './index.js'
import { retiredKeySeconds } from './provider.js'
import { auditAction, rotateOnOperator } from '../registrations/lifecycle.js'
import { oidcClientKind } from './kind.js'

export interface OidcAdminOptions {
  store: OidcStore
  providers: Pick<OidcProviders, 'rotateKey'>
  users: { getUser(id: string): Promise<unknown> }
  audit?: Pick<AuditStore, 'record'>
}

export const clientView = (c: OidcClient) => ({
  client_id: c.clientId,
  name: c.name,
  owner: c.ownerId,
  type: c.public ? 'public' : 'confidential',
  redirect_uris: c.redirectUris,
  post_logout_redirect_uris: c.postLogoutRedirectUris,
  api_scopes: c.apiScopes,
  created_at: isoSeconds(c.createdAt),
})

// Catalogue codes (docs/api.md#errors): a bad field is `invalid_parameter`, as in every
// area of the operator API; a redirect URI kigo will not register is `invalid_redirect_uri`
// (the code of RFC 7591 §3.2.2, also on the account pages).
const bad = (message: string) => new ApiError(400, 'invalid_parameter', message)
/** A registration's own check refused a value: the name is a bad parameter, a redirect URI one kigo will not register. */
const refusedInput = (err: InvalidInput) => new ApiError(400, err.field === 'name' || err.field === 'api_scopes' ? 'invalid_parameter' : 'invalid_redirect_uri', `Invalid request body: ${err.message}`)
const clientNotFound = (id: string) => new ApiError(404, 'client_not_found', `No OpenID Connect client with client_id ${JSON.stringify(id)}`)

function stringList(body: Record<string, unknown>, name: string, required: boolean): string[] {
  const v = body[name]
  if (v === undefined && !required) return []
  if (!Array.isArray(v) || v.some((u) => typeof u !== 'string')) throw bad(`Invalid request body: ${name} must be an array of URLs`)
  return v as string[]
}

export async function oidcAdminApi(app: FastifyInstance, options: OidcAdminOptions): Promise<void> {
  const { store } = options

  const audited = auditTrail(options.audit, app.log)

  app.answerErrorsAs(operatorErrorArea({ unavailable: () => errors.unavailable('store_unavailable', 'The store cannot answer right now; try again shortly') }))
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.post('/admin/oidc-clients', { bodyLimit: 64 * 1024 }, async (request, reply) => {
    const body = request.body
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('Invalid request body: send a JSON object')
    const b = body as Record<string, unknown>
    const unknown = Object.keys(b).filter((k) => !['name', 'owner', 'redirect_uris', 'post_logout_redirect_uris', 'public', 'api_scopes'].includes(k))
    if (unknown.length > 0) throw bad(`Invalid request body: unknown field ${unknown[0]}`)
    if (typeof b.name !== 'string') throw bad('Invalid request body: name is required')
    if (typeof b.owner !== 'string' || !userIdPattern.test(b.owner)) throw bad('Invalid request body: owner must be a user ID')
    if (b.public !== undefined && typeof b.public !== 'boolean') throw bad('Invalid request body: public must be true or false')
    const redirectUris = stringList(b, 'redirect_uris', true)
    const postLogout = stringList(b, 'post_logout_redirect_uris', false)
    // The API scopes the client may be granted (OAuth 2.0 for the API, docs/oauth2.md#registering-a-client).
    const apiScopes = b.api_scopes === undefined ? [] : b.api_scopes
    if (!Array.isArray(apiScopes) || apiScopes.some((v) => typeof v !== 'string')) throw bad('Invalid request body: api_scopes must be an array of scope names')
    if (!(await options.users.getUser(b.owner))) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(b.owner)}`)
    let created: Awaited<ReturnType<OidcStore['createClient']>>
    try {
      created = await store.createClient({ name: b.name, ownerId: b.owner, redirectUris, postLogoutRedirectUris: postLogout, public: b.public === true, apiScopes: apiScopes as string[] })
    } catch (err) {
      if (err instanceof InvalidInput) throw refusedInput(err)
      if (err instanceof NotFound) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(b.owner)}`)
      throw err
    }
    await audited(operatorActor(request), { kind: 'oidc', action: auditAction(oidcClientKind, 'create'), target: created.client.clientId, before: null, after: clientView(created.client) })
    return reply.code(201).send({ ...clientView(created.client), ...(created.secret === null ? {} : { client_secret: created.secret }) })
  })

  app.get('/admin/oidc-clients', async (request) => {
    const owner = (request.query as Record<string, unknown>).owner
    if (owner !== undefined && (typeof owner !== 'string' || !userIdPattern.test(owner))) throw bad('Invalid query: owner must be a user ID')
    return { clients: (await store.listClients(owner)).map(clientView) }
  })

  app.get('/admin/oidc-clients/:id', async (request) => {
    const id = (request.params as { id: string }).id
    const found = await store.findClient(id)
    if (!found) throw clientNotFound(id)
    return clientView(found)
  })

  // The operator corrects a registration: the fields given (at least one), checked as a
  // registration checks them; the client_id, type, secret and grants stay.
  app.patch('/admin/oidc-clients/:id', { bodyLimit: 64 * 1024 }, async (request) => {
    const id = (request.params as { id: string }).id
    const body = request.body
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('Invalid request body: send a JSON object')
    const b = body as Record<string, unknown>
    const unknown = Object.keys(b).filter((k) => !['name', 'redirect_uris', 'post_logout_redirect_uris'].includes(k))
    if (unknown.length > 0) throw bad(`Invalid request body: unknown field ${unknown[0]}; a client's name, redirect_uris and post_logout_redirect_uris can be changed`)
    if (Object.keys(b).length === 0) throw bad('Invalid request body: give name, redirect_uris or post_logout_redirect_uris')
    if (b.name !== undefined && typeof b.name !== 'string') throw bad('Invalid request body: name must be a string')
    const found = await store.findClient(id)
    if (!found) throw clientNotFound(id)
    const edited = await store.updateClient(id, {
      name: typeof b.name === 'string' ? b.name : found.name,
      redirectUris: b.redirect_uris === undefined ? found.redirectUris : stringList(b, 'redirect_uris', true),
      postLogoutRedirectUris: b.post_logout_redirect_uris === undefined ? found.postLogoutRedirectUris : stringList(b, 'post_logout_redirect_uris', false),
    }).catch(refused)
    if (edited instanceof InvalidInput) throw refusedInput(edited)
    if (!edited) throw clientNotFound(id)
    await audited(operatorActor(request), { kind: 'oidc', action: auditAction(oidcClientKind, 'edit'), target: id, before: clientView(edited.before), after: clientView(edited.after) })
    return clientView(edited.after)
  })

  // The optional body {"overlap_seconds": N} keeps the old secret working that long.
  app.post('/admin/oidc-clients/:id/rotate-secret', { bodyLimit: 64 * 1024 }, (request) => {
    const id = (request.params as { id: string }).id
    return rotateOnOperator({
      kind: oidcClientKind,
      request,
      id,
      audited,
      async rotate(overlapSeconds) {
        const rotated = await store.rotateClientSecret(id, { overlapSeconds })
        return rotated === null ? 'not_found' : rotated === 'public' ? 'no_secret' : rotated
      },
      notFound: () => clientNotFound(id),
      answer: (secret) => ({ client_id: id, client_secret: secret }),
    })
  })

  app.delete('/admin/oidc-clients/:id', async (request) => {
    const id = (request.params as { id: string }).id
    const deleted = await store.deleteClient(id)
    if (!deleted) throw clientNotFound(id)
    await audited(operatorActor(request), { kind: 'oidc', action: auditAction(oidcClientKind, 'delete'), target: id, before: { ...clientView(deleted.client), grants: deleted.grants }, after: null })
    return { deleted: true, client_id: id, name: deleted.client.name, grants_revoked: deleted.grants }
  })

  app.post('/admin/oidc/rotate-key', async (request) => {
    const rotated = await options.providers.rotateKey()
    await audited(operatorActor(request), { kind: 'oidc', action: 'oidc_key.rotate', target: rotated.kid, before: { kids: rotated.retired }, after: { kid: rotated.kid } })
    return { kid: rotated.kid, retired: rotated.retired, retired_published_for_seconds: retiredKeySeconds, dropped: rotated.dropped }
  })
}
