// The operator API's users (docs/gateway.md#the-operator-api-and-dashboard): create one (its
// passwords shown once), read, list, reset either password, set the display name or the
// contact e-mail.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError } from '../../common/errors.js'
import { loginPasswordProblem } from '../../common/password-rule.js'
import { Type, type TSchema } from '../../common/typebox.js'
import { Conflict, type User } from '../store/types.js'
import { bodyLimit, errorResponses, Name, Timestamp, UserId, userNotFound, type AdminRouteOptions } from '../registrations/admin-routes.js'
import { isoSeconds } from '../../common/time.js'
import { operatorActor } from '../audit/audited.js'

const Password = Type.String({ minLength: 1, maxLength: 1024 })
const CreateUserBody = Type.Object(
  { id: UserId, name: Type.Optional(Name), password: Type.Optional(Password) },
  { additionalProperties: false },
)
const CreatedUser = Type.Object({ id: Type.String(), name: Type.String(), password: Type.String(), api_password: Type.String() })
const UserView = Type.Object({ id: Type.String(), name: Type.String(), created_at: Timestamp })
const OrNull = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const UserDetail = Type.Object({ id: Type.String(), name: Type.String(), email: OrNull(Type.String()), email_pending: OrNull(Type.String()), email_pending_until: OrNull(Timestamp), created_at: Timestamp })
const UserParams = Type.Object({ id: UserId })
const ApiPasswordReset = Type.Object({ id: Type.String(), api_password: Type.String() })
const LoginPasswordReset = Type.Object({ id: Type.String(), password: Type.String(), sessions_ended: Type.Integer() })
const UserListView = Type.Object({ id: Type.String(), name: Type.String(), email: Type.Union([Type.String(), Type.Null()]), created_at: Timestamp })
const NameBody = Type.Object({ name: Name }, { additionalProperties: false })
const EmailBody = Type.Object({ email: Type.Union([Type.String({ minLength: 1, maxLength: 254 }), Type.Null()]) }, { additionalProperties: false })

const userView = (u: User) => ({ id: u.id, name: u.name, created_at: isoSeconds(u.createdAt) })

export async function adminUsers(instance: FastifyInstance, { store, newPassword, audited, changed, now, pendingEmail }: AdminRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

  app.post('/admin/users', {
    bodyLimit,
    schema: { body: CreateUserBody, response: { 201: CreatedUser, ...errorResponses } },
  }, async (request, reply) => {
    const { id } = request.body
    const name = request.body.name ?? id
    const password = request.body.password ?? newPassword()
    const weak = request.body.password === undefined ? null : loginPasswordProblem(password, id)
    if (weak !== null) throw new ApiError(400, 'invalid_parameter', `Invalid request body: ${weak}`)
    const apiPassword = newPassword()
    let user: User
    try {
      user = await store.createUser({ id, name, password, apiPassword })
    } catch (err) {
      if (err instanceof Conflict) throw new ApiError(409, 'user_exists', `User ${JSON.stringify(id)} already exists`)
      throw err
    }
    changed({ kind: 'user', userId: user.id })
    await audited(operatorActor(request), { kind: 'user', action: 'user.create', target: user.id, before: null, after: userView(user) })
    return reply.code(201).send({ id: user.id, name: user.name, password, api_password: apiPassword })
  })

  app.get('/admin/users/:id', {
    schema: { params: UserParams, response: { 200: UserDetail, ...errorResponses } },
  }, async (request) => {
    const user = await store.getUser(request.params.id)
    if (!user) throw userNotFound(request.params.id)
    // The address in use was confirmed by its owner's link, or set by an operator; one
    // the user asked for is not used until its link is opened.
    const [email, pending] = await Promise.all([store.getUserEmail(user.id), pendingEmail ? pendingEmail(user.id, now()) : null])
    const { created_at: createdAt, ...named } = userView(user)
    return { ...named, email, email_pending: pending?.email ?? null, email_pending_until: pending ? isoSeconds(pending.expiresAt) : null, created_at: createdAt }
  })

  app.post('/admin/users/:id/reset-api-password', {
    bodyLimit,
    schema: { params: UserParams, response: { 200: ApiPasswordReset, ...errorResponses } },
  }, async (request) => {
    const { id } = request.params
    const apiPassword = newPassword()
    if (!(await store.setApiPassword(id, apiPassword))) throw userNotFound(id)
    changed({ kind: 'api_password', userId: id })
    // Neither password is recorded: the event alone.
    await audited(operatorActor(request), { kind: 'user', action: 'user.reset_api_password', target: id, before: null, after: null })
    return { id, api_password: apiPassword }
  })

  // A forgotten login password: the operator sets a generated one, shown only in this
  // answer, and every account session of the user ends (whoever held one must sign in again).
  app.post('/admin/users/:id/reset-password', {
    bodyLimit,
    schema: { params: UserParams, response: { 200: LoginPasswordReset, ...errorResponses } },
  }, async (request, reply) => {
    const { id } = request.params
    const password = newPassword()
    if (!(await store.setLoginPassword(id, password))) throw userNotFound(id)
    const ended = await store.endUserSessions(id)
    changed({ kind: 'user', userId: id })
    await audited(operatorActor(request), { kind: 'user', action: 'user.reset_password', target: id, before: null, after: { sessions_ended: ended } })
    return reply.header('cache-control', 'no-store').send({ id, password, sessions_ended: ended })
  })

  app.get('/admin/users', {
    schema: { response: { 200: Type.Object({ users: Type.Array(UserListView) }), ...errorResponses } },
  }, async () => ({ users: (await store.listUsers()).map((u) => ({ ...userView(u), email: u.email })) }))

  // docs/gateway.md#registered-users-in-the-core: the core has the new name when this answers
  // (or, when it could not be reached, as soon as it answers again).
  app.put('/admin/users/:id/name', {
    bodyLimit,
    schema: { params: UserParams, body: NameBody, response: { 200: UserView, ...errorResponses } },
  }, async (request) => {
    const { id } = request.params
    // A name of blanks is the store's InvalidInput: 400 invalid_parameter (admin-api.ts).
    const renamed = await store.setUserName(id, request.body.name)
    if (!renamed) throw userNotFound(id)
    changed({ kind: 'user', userId: id })
    await audited(operatorActor(request), { kind: 'user', action: 'user.set_name', target: id, before: { name: renamed.before }, after: { name: renamed.user.name } })
    return userView(renamed.user)
  })

  app.put('/admin/users/:id/email', {
    bodyLimit,
    schema: { params: UserParams, body: EmailBody, response: { 200: Type.Object({ id: Type.String(), email: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses } },
  }, async (request) => {
    const { id } = request.params
    const before = (await store.listUsers()).find((u) => u.id === id)
    if (!before) throw userNotFound(id)
    const email = request.body.email
    if (!(await store.setUserEmail(id, email))) throw userNotFound(id)
    await audited(operatorActor(request), { kind: 'user', action: 'user.set_email', target: id, before: { email: before.email }, after: { email } })
    return { id, email }
  })
}
