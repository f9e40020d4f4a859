// The operator API's applications, OAuth consumers (docs/gateway.md#the-operator-api-and-dashboard):
// register one (its secret shown once), list, read, edit, rotate the secret (with an
// optional overlap, docs/gateway.md#rotating-a-secret; the new secret shown once), delete.
import { registrationClosedError } from '../policy/registration.js'
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError } from '../../common/errors.js'
import { Type, type Static } from '../../common/typebox.js'
import { checkCallbackUrl, InvalidInput } from '../store/validation.js'
import { NotFound, type Consumer } from '../store/types.js'
import { bodyLimit, consumerNotFound, errorResponses, Key, Name, ScopeList, Timestamp, UserId, userNotFound, type AdminRouteOptions } from '../registrations/admin-routes.js'
import { isoSeconds } from '../../common/time.js'
import { operatorActor } from '../audit/audited.js'
import { auditAction, rotateOnOperator } from '../registrations/lifecycle.js'
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
const AppsQuery = Type.Object({ owner: Type.Optional(UserId) }, { additionalProperties: false })
const AppParams = Type.Object({ key: Key })
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
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post('/admin/apps', {
    bodyLimit,
    schema: { body: CreateAppBody, response: { 201: CreatedApp, ...errorResponses } },
  }, async (request, reply) => {
    if (registrationClosed?.() === true) throw registrationClosedError()
    const { name, owner, scopes } = request.body
    const callback = checkCallback(request.body.callback)
    if (!(await store.getUser(owner))) throw userNotFound(owner)
    let created: { consumer: Consumer; secret: string }
    try {
      created = await store.createConsumer({ name, ownerId: owner, scopes, callbackUrl: callback })
    } catch (err) {
      if (err instanceof NotFound) throw userNotFound(owner)
      throw err
    }
    const { consumer, secret } = created
    changed({ kind: 'consumer', consumerKey: consumer.key })
    await audited(operatorActor(request), { kind: 'app', action: auditAction(applicationKind, 'create'), target: consumer.key, before: null, after: appView(consumer) })
    return reply.code(201).send({ consumer_key: consumer.key, consumer_secret: secret, name: consumer.name, scopes: consumer.scopes })
  })

  app.get('/admin/apps', {
    schema: { querystring: AppsQuery, response: { 200: Type.Object({ apps: Type.Array(AppView) }), ...errorResponses } },
  }, async (request) => {
    const { owner } = request.query
    if (owner !== undefined && !(await store.getUser(owner))) throw userNotFound(owner)
    return { apps: (await store.listConsumers(owner)).map(appView) }
  })

  app.get('/admin/apps/:key', {
    schema: { params: AppParams, response: { 200: AppDetail, ...errorResponses } },
  }, async (request) => {
    const found = await store.getConsumer(request.params.key)
    if (!found) throw consumerNotFound(request.params.key)
    const tokens = await store.listAccessTokens({ consumerKey: found.consumer.key })
    return { ...appView(found.consumer), tokens: tokens.length, active_tokens: tokens.filter((t) => t.revokedAt === null).length }
  })

  // The operator corrects a registration: the fields given, checked as a registration
  // checks them (an empty body is refused); the key, secret, scopes and tokens stay.
  app.patch('/admin/apps/:key', {
    bodyLimit,
    schema: { params: AppParams, body: EditAppBody, response: { 200: AppView, ...errorResponses } },
  }, async (request) => {
    const found = await store.getConsumer(request.params.key)
    if (!found) throw consumerNotFound(request.params.key)
    const c = found.consumer
    const b = request.body
    const callbackUrl = b.callback === undefined ? c.callbackUrl : checkCallback(b.callback)
    const edited = await store.updateConsumer(c.key, { name: b.name ?? c.name, callbackUrl, homeUrl: b.home_page === undefined ? c.homeUrl : b.home_page })
    if (!edited) throw consumerNotFound(request.params.key)
    changed({ kind: 'consumer', consumerKey: c.key })
    await audited(operatorActor(request), { kind: 'app', action: auditAction(applicationKind, 'edit'), target: c.key, before: appView(edited.before), after: appView(edited.after) })
    return appView(edited.after)
  })

  // A leaked consumer secret is replaced without re-registering: the key and the
  // application's access tokens stay. Requests signed with the old secret fail at once,
  // or after the overlap the optional body asks for ({"overlap_seconds": 3600}; 0, 3600,
  // 86400 or 604800), time to give the application the new one.
  app.post('/admin/apps/:key/rotate-secret', {
    bodyLimit,
    schema: { params: AppParams, response: { 200: RotatedSecret, ...errorResponses } },
  }, async (request) => {
    const key = request.params.key
    const answer = await rotateOnOperator({
      kind: applicationKind,
      request,
      id: key,
      audited,
      rotate: async (overlapSeconds) => (await store.rotateConsumerSecret(key, { overlapSeconds, now: new Date(now()) })) ?? 'not_found',
      notFound: () => consumerNotFound(key),
      answer: (secret) => ({ consumer_key: key, consumer_secret: secret }),
    })
    changed({ kind: 'consumer', consumerKey: key })
    return answer as Static<typeof RotatedSecret>
  })

  app.delete('/admin/apps/:key', {
    schema: { params: AppParams, response: { 200: DeletedApp, ...errorResponses } },
  }, async (request) => {
    const deleted = await store.deleteConsumer(request.params.key)
    if (!deleted) throw consumerNotFound(request.params.key)
    changed({ kind: 'consumer', consumerKey: deleted.consumer.key })
    await audited(operatorActor(request), { kind: 'app', action: auditAction(applicationKind, 'delete'), target: deleted.consumer.key, before: { ...appView(deleted.consumer), tokens: deleted.tokens }, after: null })
    return { deleted: true, consumer_key: deleted.consumer.key, name: deleted.consumer.name, tokens_deleted: deleted.tokens }
  })
}
