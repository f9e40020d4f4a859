// One kind of registered client on the operator API (docs/gateway.md#rotating-a-secret),
// written once for every kind whose routes are a collection of their own (OAuth 1.0a
// applications, login sites, OpenID Connect clients): register (201, the secret in that
// answer only), list (by owner if asked), show, edit (the fields given, at least one; the
// ID and secret stay), rotate the secret (an optional overlap, lifecycle.ts) and delete. Every body, path and query is
// checked against the kind's schemas (route-schemas.ts: a bad field is a 400 naming it);
// every change is audited as `<kind>.<action>` by the operator; nothing is cached.
//
// A kind gives a descriptor (`OperatorRegistrations`): its paths and body schemas, its
// store calls, its views and its words; the routes and their order of steps are here. A
// kind may also give its answers' schemas (fields beyond them are not sent), a fuller
// answer for show, and a listener told of every change (the applications': the gateway's
// cached credentials of that application are dropped).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError, errors } from '../../common/errors.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { Type, type Static, type TSchema } from '../../common/typebox.js'
import { auditTrail, operatorActor, type Audited } from '../audit/audited.js'
import type { AuditStore } from '../audit/store.js'
import type { OverlapSeconds } from '../domain/secret-rotation.js'
import { NotFound } from '../store/types.js'
import { InvalidInput, refused } from '../store/validation.js'
import { bodyLimit, errorResponses, Key, UserId, userNotFound } from './admin-routes.js'
import { auditAction, rotateOnOperator, type RegistrationKind, type Rotated } from './lifecycle.js'
import { strictValidatorCompiler } from './route-schemas.js'

/** One kind's operator routes: registrations `T`, registered with a body of schema `C`, edited with one of schema `E`. */
export interface OperatorRegistrations<T, C extends TSchema, E extends TSchema> {
  kind: RegistrationKind
  /** The collection's path (`/admin/sites`) and the list's field in its answer (`sites`). */
  collection: string
  listField: string
  /** The path parameter naming one registration (`key`, `id`). */
  param: string
  audit?: Pick<AuditStore, 'record'> | undefined
  /** The scope's audit trail when it has one already (the identity administration's); else one is made of `audit`. */
  audited?: Audited
  /** The 503's words when the store cannot answer. */
  unavailable: string
  /** The registration's body; its `owner` is a user ID. */
  createBody: C
  /** What may be edited: any of its fields, at least one. */
  editBody: E
  /** The store's registration, with its secret (none for a public client); a `NotFound` it throws is the owner missing (404 user_not_found). */
  create(body: Static<C>): Promise<{ item: T; secret: string | null }>
  list(owner: string | undefined): Promise<T[]>
  find(id: string): Promise<T | null>
  /** The store's edit of `found` with the fields given: before and after, or null when it is gone. */
  update(found: T, body: Static<E>): Promise<{ before: T; after: T } | null>
  rotate(id: string, overlapSeconds: OverlapSeconds): Promise<Rotated>
  /** The store's deletion: the audit trail's `before` and the answer, or null when there was none. */
  remove(id: string): Promise<{ before: unknown; answer: Record<string, unknown> } | null>
  /** The registration as the answers and the audit trail show it. */
  view: (item: T) => Record<string, unknown>
  /** The answer's ID and secret fields (`{ api_key, secret }`), after a registration (but a public client's) or a rotation. */
  secretFields(id: string, secret: string): Record<string, string>
  idOf(item: T): string
  notFound(id: string): ApiError
  /** A value the store refused (`InvalidInput`), as a 400. */
  refusedInput(err: InvalidInput): ApiError
  /** The show answer when it says more than the view (default the view). */
  show?(item: T): Promise<Record<string, unknown>>
  /** Told of each change (registered, edited, rotated, deleted) once the store made it, before it is audited. */
  changed?(id: string): void
  /** Each answer's schema; the error body's is added. Without them an answer is sent as made. */
  responses?: OperatorResponses
}

/** The schemas of a kind's answers, one per route. */
export interface OperatorResponses {
  create: TSchema
  list: TSchema
  show: TSchema
  edit: TSchema
  rotate: TSchema
  delete: TSchema
}

const OwnerQuery = Type.Object({ owner: Type.Optional(UserId) }, { additionalProperties: false })

/**
 * Registers a kind's routes in `instance`, a scope of the operator API of its own (its
 * validator, error answers and no-store header are set on it), and gives the scope with
 * TypeBox types for the kind's other routes.
 */
export function registerOperatorRegistrations<T, C extends TSchema, E extends TSchema>(instance: FastifyInstance, d: OperatorRegistrations<T, C, E>) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(strictValidatorCompiler)
  app.answerErrorsAs(operatorErrorArea({
    known: (err) => (err instanceof NotFound ? new ApiError(404, 'not_found', err.message) : err instanceof InvalidInput ? d.refusedInput(err) : undefined),
    unavailable: () => errors.unavailable('store_unavailable', d.unavailable),
  }))
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
  const audited = d.audited ?? auditTrail(d.audit, app.log)
  const audit = (request: FastifyRequest, action: 'create' | 'edit' | 'delete', target: string, before: unknown, after: unknown) =>
    audited(operatorActor(request), { kind: d.kind.auditKind, action: auditAction(d.kind, action), target, before, after })
  const item = `${d.collection}/:${d.param}`
  const Params = Type.Object({ [d.param]: Key })
  const idOf = (request: FastifyRequest) => (request.params as Record<string, string>)[d.param] ?? ''
  const response = (route: keyof OperatorResponses, status = 200) => (d.responses ? { response: { [status]: d.responses[route], ...errorResponses } } : {})

  app.post(d.collection, { bodyLimit, schema: { body: d.createBody, ...response('create', 201) } }, async (request, reply) => {
    const body = request.body as Static<C>
    let created: { item: T; secret: string | null }
    try {
      created = await d.create(body)
    } catch (err) {
      if (err instanceof NotFound) throw userNotFound((body as { owner: string }).owner)
      throw err
    }
    const id = d.idOf(created.item)
    d.changed?.(id)
    const view = d.view(created.item)
    await audit(request, 'create', id, null, view)
    return reply.code(201).send({ ...view, ...(created.secret === null ? {} : d.secretFields(id, created.secret)) })
  })

  app.get(d.collection, { schema: { querystring: OwnerQuery, ...response('list') } }, async (request) => {
    return { [d.listField]: (await d.list(request.query.owner)).map(d.view) }
  })

  app.get(item, { schema: { params: Params, ...response('show') } }, async (request) => {
    const found = await d.find(idOf(request))
    if (!found) throw d.notFound(idOf(request))
    return d.show ? d.show(found) : d.view(found)
  })

  // The operator corrects a registration: the fields given, checked as a registration checks them.
  app.patch(item, { bodyLimit, schema: { params: Params, body: d.editBody, ...response('edit') } }, async (request) => {
    const id = idOf(request)
    const found = await d.find(id)
    if (!found) throw d.notFound(id)
    const edited = await d.update(found, request.body as Static<E>).catch(refused)
    if (edited instanceof InvalidInput) throw d.refusedInput(edited)
    if (!edited) throw d.notFound(id)
    d.changed?.(id)
    await audit(request, 'edit', id, d.view(edited.before), d.view(edited.after))
    return d.view(edited.after)
  })

  // The optional body {"overlap_seconds": N} keeps the old secret working that long.
  app.post(`${item}/rotate-secret`, { bodyLimit, schema: { params: Params, ...response('rotate') } }, (request) => {
    const id = idOf(request)
    return rotateOnOperator({
      kind: d.kind,
      request,
      id,
      audited,
      rotate: async (overlapSeconds) => {
        const rotated = await d.rotate(id, overlapSeconds)
        if (typeof rotated === 'object') d.changed?.(id)
        return rotated
      },
      notFound: () => d.notFound(id),
      answer: (secret) => d.secretFields(id, secret),
    })
  })

  app.delete(item, { schema: { params: Params, ...response('delete') } }, async (request) => {
    const id = idOf(request)
    const deleted = await d.remove(id)
    if (!deleted) throw d.notFound(id)
    d.changed?.(id)
    await audit(request, 'delete', id, deleted.before, null)
    return deleted.answer
  })

  return app
}
