// The operator API for OpenID Connect (docs/oidc.md#by-the-operator), on the operator port
// behind the admin token: relying parties (`kigo oidc-clients …`) and the signing key
// (`kigo oidc rotate-key`). Every change is audited; a client secret appears only in the
// answer that creates or rotates it. A rotation takes an optional overlap
// (docs/oidc.md#rotating-the-client-secret).
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'
import { isoSeconds } from '../../common/time.js'
import type { InvalidInput } from '../store/validation.js'
import type { OidcClient, OidcStore } from './store.js'
import type { OidcProviders } from './index.js'
import { retiredKeySeconds } from './provider.js'
import { oidcClientKind } from './kind.js'
import { UserId, userNotFound } from '../registrations/admin-routes.js'
import { registerOperatorRegistrations } from '../registrations/operator-routes.js'

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

export async function oidcAdminApi(instance: FastifyInstance, options: OidcAdminOptions): Promise<void> {
  const { store } = options
  const app = registerOperatorRegistrations(instance, {
    kind: oidcClientKind,
    collection: '/admin/oidc-clients',
    listField: 'clients',
    param: 'id',
    audit: options.audit,
    unavailable: 'The store cannot answer right now; try again shortly',
    createBody: CreateClientBody,
    editBody: EditClientBody,
    async create(b) {
      if (!(await options.users.getUser(b.owner))) throw userNotFound(b.owner)
      const created = await store.createClient({ name: b.name, ownerId: b.owner, redirectUris: b.redirect_uris, postLogoutRedirectUris: b.post_logout_redirect_uris ?? [], public: b.public === true, apiScopes: b.api_scopes ?? [] })
      return { item: created.client, secret: created.secret }
    },
    list: (owner) => store.listClients(owner),
    find: (id) => store.findClient(id),
    // The client_id, type, secret and grants stay.
    update: (found, b) => store.updateClient(found.clientId, {
      name: b.name ?? found.name,
      redirectUris: b.redirect_uris ?? found.redirectUris,
      postLogoutRedirectUris: b.post_logout_redirect_uris ?? found.postLogoutRedirectUris,
    }),
    async rotate(id, overlapSeconds) {
      const rotated = await store.rotateClientSecret(id, { overlapSeconds })
      return rotated === null ? 'not_found' : rotated === 'public' ? 'no_secret' : rotated
    },
    async remove(id) {
      const deleted = await store.deleteClient(id)
      return deleted && { before: { ...clientView(deleted.client), grants: deleted.grants }, answer: { deleted: true, client_id: id, name: deleted.client.name, grants_revoked: deleted.grants } }
    },
    view: clientView,
    secretFields: (id, secret) => ({ client_id: id, client_secret: secret }),
    idOf: (client) => client.clientId,
    notFound: (id) => new ApiError(404, 'client_not_found', `No OpenID Connect client with client_id ${JSON.stringify(id)}`),
    refusedInput,
  })

  const audited = auditTrail(options.audit, app.log)
  app.post('/admin/oidc/rotate-key', async (request) => {
    const rotated = await options.providers.rotateKey()
    await audited(operatorActor(request), { kind: 'oidc', action: 'oidc_key.rotate', target: rotated.kid, before: { kids: rotated.retired }, after: { kid: rotated.kid } })
    return { kid: rotated.kid, retired: rotated.retired, retired_published_for_seconds: retiredKeySeconds, dropped: rotated.dropped }
  })
}
