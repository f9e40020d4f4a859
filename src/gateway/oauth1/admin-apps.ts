// The operator API's applications, OAuth consumers (docs/gateway.md#the-operator-api-and-dashboard):
// register one (its secret shown once), list, read, edit, rotate the secret (with an
// optional overlap, docs/gateway.md#rotating-a-secret; the new secret shown once), delete,
// as every registered client's (registrations/operator-routes.ts). What is the
// applications' own: registration refused while the oauth1 policy closes it, the callback
// checked before the owner is looked up, the owner checked when listing by owner, the
// access tokens counted on show and deleted with the application, each answer's schema,
// and every change dropping the gateway's cached credentials of the application.
import { registrationClosedError } from '../policy/registration.js'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import { checkCallbackUrl, InvalidInput } from '../store/validation.js'
import type { Consumer } from '../store/types.js'
import { consumerNotFound, Name, ScopeList, Timestamp, UserId, userNotFound, type AdminRouteOptions } from '../registrations/admin-routes.js'
import { isoSeconds } from '../../common/time.js'
import { registerOperatorRegistrations } from '../registrations/operator-routes.js'
import { applicationKind } from './kind.js'

const CallbackUrl = Type.String({ minLength: 1, maxLength: 2048 })
const CreateAppBody = Type.Object(
  { name: Name, owner: UserId, scopes: ScopeList, callback: Type.Optional(Type.Union([CallbackUrl, Type.Null()])) },
  { additionalProperties: false },
)
const CreatedApp = Type.Object({
  consumer_key: Type.String(),
  consumer_secret: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
})
// What may be edited after registration: any of these; the scopes stay as registered.
const EditAppBody = Type.Object(
  { name: Type.Optional(Name), callback: Type.Optional(Type.Union([CallbackUrl, Type.Null()])), home_page: Type.Optional(Type.Union([CallbackUrl, Type.Null()])) },
  { additionalProperties: false, minProperties: 1, errorMessage: 'must give name, callback or home_page' },
)
const AppView = Type.Object({
  consumer_key: Type.String(),
  name: Type.String(),
  owner: Type.String(),
  scopes: Type.Array(Type.String()),
  callback: Type.Union([Type.String(), Type.Null()]),
  home_page: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
})
const AppDetail = Type.Object({
  ...AppView.properties,
  tokens: Type.Integer(),
  active_tokens: Type.Integer(),
})
const RotatedSecret = Type.Object({
  consumer_key: Type.String(),
  consumer_secret: Type.String(),
  overlap_seconds: Type.Integer(),
  /** Until when the replaced secret keeps working; null when it stopped at once. */
  previous_secret_until: Type.Union([Timestamp, Type.Null()]),
})
const DeletedApp = Type.Object({ deleted: Type.Boolean(), consumer_key: Type.String(), name: Type.String(), tokens_deleted: Type.Integer() })

const appView = (c: Consumer) => ({
  consumer_key: c.key,
  name: c.name,
  owner: c.ownerId,
  scopes: c.scopes,
  callback: c.callbackUrl,
  home_page: c.homeUrl,
  created_at: isoSeconds(c.createdAt),
})

/** The registered OAuth callback (the store's rule), checked before the owner is looked up. */
function checkCallback(value: string | null | undefined): string | null {
  try {
    return checkCallbackUrl(value)
  } catch (err) {
    if (err instanceof InvalidInput) throw new ApiError(400, 'invalid_callback', `Invalid request body: ${err.message}`)
    throw err
  }
}

export async function adminApps(instance: FastifyInstance, { store, audited, changed, now, registrationClosed }: AdminRouteOptions): Promise<void> {
  registerOperatorRegistrations(instance, {
    kind: applicationKind,
    collection: '/admin/apps',
    listField: 'apps',
    param: 'key',
    audited,
    unavailable: 'The identity store is unavailable; try again shortly',
    createBody: CreateAppBody,
    editBody: EditAppBody,
    async create({ name, owner, scopes, callback }) {
      if (registrationClosed?.() === true) throw registrationClosedError()
      const callbackUrl = checkCallback(callback)
      if (!(await store.getUser(owner))) throw userNotFound(owner)
      const created = await store.createConsumer({ name, ownerId: owner, scopes, callbackUrl })
      return { item: created.consumer, secret: created.secret }
    },
    async list(owner) {
      if (owner !== undefined && !(await store.getUser(owner))) throw userNotFound(owner)
      return store.listConsumers(owner)
    },
    find: async (key) => (await store.getConsumer(key))?.consumer ?? null,
    // The key, secret, scopes and tokens stay.
    update: async (c, b) => store.updateConsumer(c.key, {
      name: b.name ?? c.name,
      callbackUrl: b.callback === undefined ? c.callbackUrl : checkCallback(b.callback),
      homeUrl: b.home_page === undefined ? c.homeUrl : b.home_page,
    }),
    // A leaked consumer secret is replaced without re-registering: the key and the
    // application's access tokens stay. Requests signed with the old secret fail at once,
    // or after the overlap asked for.
    rotate: async (key, overlapSeconds) => (await store.rotateConsumerSecret(key, { overlapSeconds, now: new Date(now()) })) ?? 'not_found',
    async remove(key) {
      const deleted = await store.deleteConsumer(key)
      return deleted && {
        before: { ...appView(deleted.consumer), tokens: deleted.tokens },
        answer: { deleted: true, consumer_key: deleted.consumer.key, name: deleted.consumer.name, tokens_deleted: deleted.tokens },
      }
    },
    view: appView,
    secretFields: (key, secret) => ({ consumer_key: key, consumer_secret: secret }),
    idOf: (c) => c.key,
    notFound: consumerNotFound,
    refusedInput: (err) => new ApiError(400, 'invalid_parameter', err.message),
    async show(c) {
      const tokens = await store.listAccessTokens({ consumerKey: c.key })
      return { ...appView(c), tokens: tokens.length, active_tokens: tokens.filter((t) => t.revokedAt === null).length }
    },
    changed: (key) => changed({ kind: 'consumer', consumerKey: key }),
    responses: {
      create: CreatedApp,
      list: Type.Object({ apps: Type.Array(AppView) }),
      show: AppDetail,
      edit: AppView,
      rotate: RotatedSecret,
      delete: DeletedApp,
    },
  })
}
