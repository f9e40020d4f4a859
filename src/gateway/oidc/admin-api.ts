// The operator API for OpenID Connect (docs/oidc.md#by-the-operator), on the operator port
// behind the admin token: relying parties (`kigo oidc-clients …`) and the signing key
// (`kigo oidc rotate-key`). Every change is audited; a client secret appears only in the
// answer that creates or rotates it. A rotation takes an optional overlap
// (docs/oidc.md#rotating-the-client-secret).
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError, errors } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { isoSeconds } from '../../common/time.js'
import { InvalidInput, refused } from '../store/validation.js'
import { NotFound } from '../store/types.js'
import type { OidcClient, OidcStore } from './store.js'
import type { OidcProviders } from './index.js'
import { retiredKeySeconds } from './provider.js'
import { auditAction, rotateOnOperator } from '../registrations/lifecycle.js'
import { oidcClientKind } from './kind.js'
import { bodyLimit, Key, UserId } from '../registrations/admin-routes.js'
import { strictValidatorCompiler } from '../registrations/route-schemas.js'

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
// area of the operator API (the route schemas answer it, naming the field); a redirect URI
// kigo will not register is `invalid_redirect_uri` (the code of RFC 7591 §3.2.2, also on
// the account pages).
/** A registration's own check refused a value: the name is a bad parameter, a redirect URI one kigo will not register. */
const refusedInput = (err: InvalidInput) => new ApiError(400, err.field === 'name' || err.field === 'api_scopes' ? 'invalid_parameter' : 'invalid_redirect_uri', `Invalid request body: ${err.message}`)
const clientNotFound = (id: string) => new ApiError(404, 'client_not_found', `No OpenID Connect client with client_id ${JSON.stringify(id)}`)

// The name, URIs and scope names are strings here; the store checks them as a registration
// does (its length, a redirect URI kigo registers, a known scope) and says which it refused.
const ClientName = Type.String()
const UriList = Type.Array(Type.String())
const CreateClientBody = Type.Object(
  {
    name: ClientName,
    owner: UserId,
    redirect_uris: UriList,
    post_logout_redirect_uris: Type.Optional(UriList),
    public: Type.Optional(Type.Boolean()),
    // The API scopes the client may be granted (OAuth 2.0 for the API, docs/oauth2.md#registering-a-client).
    api_scopes: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
)
// What may be edited after registration: any of these (at least one).
const EditClientBody = Type.Object(
  { name: Type.Optional(ClientName), redirect_uris: Type.Optional(UriList), post_logout_redirect_uris: Type.Optional(UriList) },
  { additionalProperties: false, minProperties: 1, errorMessage: 'must give name, redirect_uris or post_logout_redirect_uris' },
)
const ClientsQuery = Type.Object({ owner: Type.Optional(UserId) }, { additionalProperties: false })
const ClientParams = Type.Object({ id: Key })

export async function oidcAdminApi(instance: FastifyInstance, options: OidcAdminOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const { store } = options
  app.setValidatorCompiler(strictValidatorCompiler)

  const audited = auditTrail(options.audit, app.log)

  app.answerErrorsAs(operatorErrorArea({ unavailable: () => errors.unavailable('store_unavailable', 'The store cannot answer right now; try again shortly') }))
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })

  app.post('/admin/oidc-clients', { bodyLimit, schema: { body: CreateClientBody } }, async (request, reply) => {
    const b = request.body
    if (!(await options.users.getUser(b.owner))) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(b.owner)}`)
    let created: Awaited<ReturnType<OidcStore['createClient']>>
    try {
      created = await store.createClient({ name: b.name, ownerId: b.owner, redirectUris: b.redirect_uris, postLogoutRedirectUris: b.post_logout_redirect_uris ?? [], public: b.public === true, apiScopes: b.api_scopes ?? [] })
    } catch (err) {
      if (err instanceof InvalidInput) throw refusedInput(err)
      if (err instanceof NotFound) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(b.owner)}`)
      throw err
    }
    await audited(operatorActor(request), { kind: 'oidc', action: auditAction(oidcClientKind, 'create'), target: created.client.clientId, before: null, after: clientView(created.client) })
    return reply.code(201).send({ ...clientView(created.client), ...(created.secret === null ? {} : { client_secret: created.secret }) })
  })

  app.get('/admin/oidc-clients', { schema: { querystring: ClientsQuery } }, async (request) => {
    return { clients: (await store.listClients(request.query.owner)).map(clientView) }
  })

  app.get('/admin/oidc-clients/:id', { schema: { params: ClientParams } }, async (request) => {
    const id = request.params.id
    const found = await store.findClient(id)
    if (!found) throw clientNotFound(id)
    return clientView(found)
  })

  // The operator corrects a registration: the fields given (at least one), checked as a
  // registration checks them; the client_id, type, secret and grants stay.
  app.patch('/admin/oidc-clients/:id', { bodyLimit, schema: { params: ClientParams, body: EditClientBody } }, async (request) => {
    const id = request.params.id
    const b = request.body
    const found = await store.findClient(id)
    if (!found) throw clientNotFound(id)
    const edited = await store.updateClient(id, {
      name: b.name ?? found.name,
      redirectUris: b.redirect_uris ?? found.redirectUris,
      postLogoutRedirectUris: b.post_logout_redirect_uris ?? found.postLogoutRedirectUris,
    }).catch(refused)
    if (edited instanceof InvalidInput) throw refusedInput(edited)
    if (!edited) throw clientNotFound(id)
    await audited(operatorActor(request), { kind: 'oidc', action: auditAction(oidcClientKind, 'edit'), target: id, before: clientView(edited.before), after: clientView(edited.after) })
    return clientView(edited.after)
  })

  // The optional body {"overlap_seconds": N} keeps the old secret working that long.
  app.post('/admin/oidc-clients/:id/rotate-secret', { bodyLimit, schema: { params: ClientParams } }, (request) => {
    const id = request.params.id
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

  app.delete('/admin/oidc-clients/:id', { schema: { params: ClientParams } }, async (request) => {
    const id = request.params.id
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
