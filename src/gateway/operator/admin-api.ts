// The operator API for users, applications and access tokens (docs/gateway.md#the-operator-api-and-dashboard, docs/operations.md#operator-command-line), on the
// operator port behind admin-auth. JSON in, JSON out; every error is
// {"error":{"status","code","message"}}. Plain secrets (passwords, consumer and token
// secrets) appear only in the response that creates them.
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Compile, Type, type TSchema } from '../../common/typebox.js'
import type { ErrorArea } from '../../common/error-answers.js'
import { ApiError, errors, type ErrorCode } from '../../common/errors.js'
import { randomToken } from '../../common/secrets.js'
import type { AuditInput, AuditStore } from '../audit/store.js'
import { checkCallbackUrl, InvalidInput, scopesBeyondRegistration } from '../store/validation.js'
import { loginPasswordProblem } from '../../common/password-rule.js'
import { Conflict, NotFound, type AccessToken, type Consumer, type IdentityAdministration, type User } from '../store/types.js'
import { scopes as allScopes, userIdPattern } from '../domain/identifiers.js'
import { sendOperatorJson } from './errors.js'

/** What a mutation changed, so the gateway can drop cached credentials at once. */
export type AdminChange =
  | { kind: 'user'; userId: string }
  | { kind: 'api_password'; userId: string }
  | { kind: 'consumer'; consumerKey: string }
  | { kind: 'token'; token: string }

export interface AdminApiOptions {
  store: IdentityAdministration
  /** Called after each committed mutation; a throwing listener does not fail the request. */
  onChange?: (change: AdminChange) => void
  /** Bytes of randomness in a generated login or API password (base64url); default 18. */
  passwordBytes?: number
  /** Where each change is recorded (src/gateway/audit/store.ts); none: not recorded. */
  audit?: Pick<AuditStore, 'record'>
}

// ---- schemas ---------------------------------------------------------------------------

const userIdMessage = 'must be a user ID: 3 to 32 characters, a letter first, then letters, digits, "_" or "-"'
const UserId = Type.String({ pattern: userIdPattern.source, errorMessage: userIdMessage })
const Name = Type.String({ minLength: 1, maxLength: 100 })
const Password = Type.String({ minLength: 1, maxLength: 1024 })
const ScopeName = Type.Enum([...allScopes])
const ScopeList = Type.Array(ScopeName, { minItems: 1, maxItems: allScopes.length * 4 })
// Consumer keys and tokens are generated base64url; anything else cannot exist.
const Key = Type.String({ minLength: 1, maxLength: 256 })
const CallbackUrl = Type.String({ minLength: 1, maxLength: 2048 })
const Timestamp = Type.String()

const ErrorBody = Type.Object({
  error: Type.Object({ status: Type.Integer(), code: Type.String(), message: Type.String() }),
})
const errorResponses = { '4xx': ErrorBody, '5xx': ErrorBody }

const CreateUserBody = Type.Object(
  { id: UserId, name: Type.Optional(Name), password: Type.Optional(Password) },
  { additionalProperties: false },
)
const CreatedUser = Type.Object({ id: Type.String(), name: Type.String(), password: Type.String(), api_password: Type.String() })
const UserView = Type.Object({ id: Type.String(), name: Type.String(), created_at: Timestamp })
const UserParams = Type.Object({ id: UserId })
const ApiPasswordReset = Type.Object({ id: Type.String(), api_password: Type.String() })
const LoginPasswordReset = Type.Object({ id: Type.String(), password: Type.String(), sessions_ended: Type.Integer() })

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
const AppView = Type.Object({
  consumer_key: Type.String(),
  name: Type.String(),
  owner: Type.String(),
  scopes: Type.Array(Type.String()),
  callback: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
})
const AppsQuery = Type.Object({ owner: Type.Optional(UserId) }, { additionalProperties: false })

const CreateTokenBody = Type.Object(
  { consumer: Key, user: UserId, scopes: ScopeList },
  { additionalProperties: false },
)
const CreatedToken = Type.Object({ token: Type.String(), token_secret: Type.String(), scopes: Type.Array(Type.String()) })
const TokenView = Type.Object({
  token: Type.String(),
  consumer: Type.String(),
  user: Type.String(),
  scopes: Type.Array(Type.String()),
  created_at: Timestamp,
  revoked_at: Type.Union([Timestamp, Type.Null()]),
})
const TokensQuery = Type.Object({ user: Type.Optional(UserId), consumer: Type.Optional(Key) }, { additionalProperties: false })
const TokenParams = Type.Object({ token: Key })
const AppParams = Type.Object({ key: Key })
const AppDetail = Type.Object({
  ...AppView.properties,
  tokens: Type.Integer(),
  active_tokens: Type.Integer(),
})
const RotatedSecret = Type.Object({ consumer_key: Type.String(), consumer_secret: Type.String() })
const DeletedApp = Type.Object({ deleted: Type.Boolean(), consumer_key: Type.String(), name: Type.String(), tokens_deleted: Type.Integer() })
const UserListView = Type.Object({ id: Type.String(), name: Type.String(), email: Type.Union([Type.String(), Type.Null()]), created_at: Timestamp })
const EmailBody = Type.Object({ email: Type.Union([Type.String({ minLength: 1, maxLength: 254 }), Type.Null()]) }, { additionalProperties: false })

// ---- validation ------------------------------------------------------------------------

interface SchemaError {
  keyword: string
  instancePath: string
  schemaPath: string
  params: Record<string, unknown>
  message: string
}

const partNames: Record<string, string> = { body: 'request body', querystring: 'query', params: 'path', headers: 'headers' }

/** The schema node a schemaPath (`#/properties/x/items`) points at. */
function nodeAt(schema: unknown, schemaPath: string): Record<string, unknown> | undefined {
  let node = schema
  for (const key of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined
}

/** One sentence for the first meaningful schema error, naming the field. */
export function describeSchemaError(errors: SchemaError[], part: string, schema: unknown): string {
  // `additionalProperties: false` reports a "schema is false" error beside the useful one.
  const error = errors.find((e) => e.keyword !== 'boolean') ?? errors[0]
  const where = partNames[part] ?? part
  if (!error) return `Invalid ${where}`
  const field = error.instancePath.slice(1).replace(/\/([0-9]+)(?=\/|$)/g, '[$1]').replaceAll('/', '.')
  const p = error.params
  switch (error.keyword) {
    case 'required': {
      const name = (p.requiredProperties as string[] | undefined)?.[0] ?? '?'
      return `Invalid ${where}: "${field === '' ? name : `${field}.${name}`}" is required`
    }
    case 'additionalProperties': {
      const name = (p.additionalProperties as string[] | undefined)?.[0] ?? '?'
      return `Invalid ${where}: unknown ${part === 'body' ? 'field' : 'parameter'} "${name}"`
    }
  }
  let what: string
  switch (error.keyword) {
    case 'type':
      what = field === '' && part === 'body' ? 'must be a JSON object' : `must be ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}`
      break
    case 'enum':
      what = `must be one of ${(p.allowedValues as unknown[]).join(', ')}`
      break
    case 'minLength':
      what = p.limit === 1 ? 'must not be empty' : `must have at least ${String(p.limit)} characters`
      break
    case 'maxLength':
      what = `must have at most ${String(p.limit)} characters`
      break
    case 'minItems':
      what = `must list at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`
      break
    case 'maxItems':
      what = `must list at most ${String(p.limit)} items`
      break
    default: {
      const custom = nodeAt(schema, error.schemaPath)?.errorMessage
      what = typeof custom === 'string' ? custom : error.message
    }
  }
  // A union (`callback`: string or null) reports each branch; name the useful one.
  if (error.keyword === 'anyOf' || error.keyword === 'const') what = 'has an invalid value'
  return `Invalid ${where}: ${field === '' ? 'value' : `"${field}"`} ${what}`
}

/**
 * TypeBox's compiled checker as the route validator: no type coercion and no silently
 * dropped fields (every input here is a string or a list of strings already), and a 400
 * naming the field on failure.
 */
const strictValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema)
  return (value: unknown) => {
    if (check.Check(value)) return { value }
    const message = describeSchemaError(check.Errors(value), httpPart ?? 'body', schema)
    return { error: new ApiError(400, 'invalid_parameter', message) }
  }
}

// ---- errors ----------------------------------------------------------------------------

// Fastify's own 4xx errors (body parsing), with kigo codes and plain messages.
const fastifyErrors: Record<string, { code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'invalid_json', message: 'The request body is empty but Content-Type says JSON' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', message: 'Send the request body as application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'body_too_large', message: 'The request body is too large' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'bad_request', message: 'Content-Length does not match the body' },
}

/** The users, applications and tokens API's answers: the identity store's refusals, then the classifier. */
const identityErrors: ErrorArea = {
  known: (err) => err instanceof Conflict ? new ApiError(409, 'conflict', err.message)
    : err instanceof NotFound ? new ApiError(404, 'not_found', err.message)
      : err instanceof InvalidInput ? new ApiError(400, 'invalid_parameter', err.message)
        : undefined,
  wording: {
    request: (f) => {
      const known = fastifyErrors[f.reason]
      return new ApiError(f.status, known?.code ?? 'bad_request', known?.message ?? f.message)
    },
    unavailable: () => errors.unavailable('store_unavailable', 'The identity store is unavailable; try again shortly'),
    internalMessage: 'Internal error',
  },
  render: sendOperatorJson,
  logMessage: 'operator API request failed',
}

// ---- views -----------------------------------------------------------------------------

/** UTC to the second, as elsewhere in kigo (docs/api.md#objects). */
const isoSeconds = (d: Date) => d.toISOString().replace(/\.[0-9]{3}Z$/, 'Z')

const userView = (u: User) => ({ id: u.id, name: u.name, created_at: isoSeconds(u.createdAt) })
const appView = (c: Consumer) => ({
  consumer_key: c.key,
  name: c.name,
  owner: c.ownerId,
  scopes: c.scopes,
  callback: c.callbackUrl,
  created_at: isoSeconds(c.createdAt),
})
const tokenView = (t: AccessToken) => ({
  token: t.token,
  consumer: t.consumerKey,
  user: t.userId,
  scopes: t.scopes,
  created_at: isoSeconds(t.createdAt),
  revoked_at: t.revokedAt === null ? null : isoSeconds(t.revokedAt),
})

const userNotFound = (id: string) => new ApiError(404, 'user_not_found', `No user ${JSON.stringify(id)}`)
const consumerNotFound = (key: string) => new ApiError(404, 'consumer_not_found', `No application with consumer key ${JSON.stringify(key)}`)

/** The registered OAuth callback (the store's rule), checked before the owner is looked up. */
function checkCallback(value: string | null | undefined): string | null {
  try {
    return checkCallbackUrl(value)
  } catch (err) {
    if (err instanceof InvalidInput) throw new ApiError(400, 'invalid_callback', `Invalid request body: ${err.message}`)
    throw err
  }
}

// ---- routes ----------------------------------------------------------------------------

export async function adminApi(instance: FastifyInstance, options: AdminApiOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const { store } = options
  const passwordBytes = options.passwordBytes ?? 18
  const newPassword = () => randomToken(passwordBytes)

  // The audit trail follows the committed change; a failed write is logged, never the
  // request's failure (the operator already holds its result, perhaps a secret shown once).
  const audited = async (request: { ip: string; log: { warn(o: object, m: string): void } }, event: Omit<AuditInput, 'address'>) => {
    if (!options.audit) return
    try {
      await options.audit.record({ ...event, address: request.ip })
    } catch (err) {
      request.log.warn({ err: { message: (err as Error).message }, action: event.action, target: event.target }, 'audit record failed')
    }
  }

  const changed = (change: AdminChange) => {
    try {
      options.onChange?.(change)
    } catch (err) {
      // The mutation is committed; a stale cache entry still expires by itself.
      app.log.warn({ err, change: change.kind }, 'operator API change listener failed')
    }
  }

  app.setValidatorCompiler(strictValidatorCompiler)
  app.answerErrorsAs(identityErrors)
  // Responses may carry secrets once; no cache may keep them.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })

  const bodyLimit = 64 * 1024

  // -- users

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
    await audited(request, { kind: 'user', action: 'user.create', target: user.id, before: null, after: userView(user) })
    return reply.code(201).send({ id: user.id, name: user.name, password, api_password: apiPassword })
  })

  app.get('/admin/users/:id', {
    schema: { params: UserParams, response: { 200: UserView, ...errorResponses } },
  }, async (request) => {
    const user = await store.getUser(request.params.id)
    if (!user) throw userNotFound(request.params.id)
    return userView(user)
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
    await audited(request, { kind: 'user', action: 'user.reset_api_password', target: id, before: null, after: null })
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
    await audited(request, { kind: 'user', action: 'user.reset_password', target: id, before: null, after: { sessions_ended: ended } })
    return reply.header('cache-control', 'no-store').send({ id, password, sessions_ended: ended })
  })

  app.get('/admin/users', {
    schema: { response: { 200: Type.Object({ users: Type.Array(UserListView) }), ...errorResponses } },
  }, async () => ({ users: (await store.listUsers()).map((u) => ({ ...userView(u), email: u.email })) }))

  app.put('/admin/users/:id/email', {
    bodyLimit,
    schema: { params: UserParams, body: EmailBody, response: { 200: Type.Object({ id: Type.String(), email: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses } },
  }, async (request) => {
    const { id } = request.params
    const before = (await store.listUsers()).find((u) => u.id === id)
    if (!before) throw userNotFound(id)
    const email = request.body.email
    if (!(await store.setUserEmail(id, email))) throw userNotFound(id)
    await audited(request, { kind: 'user', action: 'user.set_email', target: id, before: { email: before.email }, after: { email } })
    return { id, email }
  })

  // -- applications (OAuth consumers)

  app.post('/admin/apps', {
    bodyLimit,
    schema: { body: CreateAppBody, response: { 201: CreatedApp, ...errorResponses } },
  }, async (request, reply) => {
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
    await audited(request, { kind: 'app', action: 'app.create', target: consumer.key, before: null, after: appView(consumer) })
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

  // A leaked consumer secret is replaced without re-registering: the key and the
  // application's access tokens stay, only requests signed with the old secret fail.
  app.post('/admin/apps/:key/rotate-secret', {
    bodyLimit,
    schema: { params: AppParams, response: { 200: RotatedSecret, ...errorResponses } },
  }, async (request) => {
    const rotated = await store.rotateConsumerSecret(request.params.key)
    if (!rotated) throw consumerNotFound(request.params.key)
    changed({ kind: 'consumer', consumerKey: rotated.consumer.key })
    await audited(request, { kind: 'app', action: 'app.rotate_secret', target: rotated.consumer.key, before: null, after: null })
    return { consumer_key: rotated.consumer.key, consumer_secret: rotated.secret }
  })

  app.delete('/admin/apps/:key', {
    schema: { params: AppParams, response: { 200: DeletedApp, ...errorResponses } },
  }, async (request) => {
    const deleted = await store.deleteConsumer(request.params.key)
    if (!deleted) throw consumerNotFound(request.params.key)
    changed({ kind: 'consumer', consumerKey: deleted.consumer.key })
    await audited(request, { kind: 'app', action: 'app.delete', target: deleted.consumer.key, before: { ...appView(deleted.consumer), tokens: deleted.tokens }, after: null })
    return { deleted: true, consumer_key: deleted.consumer.key, name: deleted.consumer.name, tokens_deleted: deleted.tokens }
  })

  // -- access tokens issued without the browser flow

  app.post('/admin/tokens', {
    bodyLimit,
    schema: { body: CreateTokenBody, response: { 201: CreatedToken, ...errorResponses } },
  }, async (request, reply) => {
    const { consumer: key, user: userId } = request.body
    const scopes = request.body.scopes
    const found = await store.getConsumer(key)
    if (!found) throw consumerNotFound(key)
    if (!(await store.getUser(userId))) throw userNotFound(userId)
    const beyond = scopesBeyondRegistration(scopes, found.consumer.scopes)
    if (beyond !== null) throw new ApiError(400, 'scope_not_registered', `Application ${JSON.stringify(found.consumer.name)} is ${beyond}`)
    let created: { token: AccessToken; secret: string }
    try {
      created = await store.createAccessToken({ consumerKey: key, userId, scopes })
    } catch (err) {
      // The consumer or user vanished between the checks and the insert.
      if (err instanceof NotFound) throw new ApiError(404, 'not_found', err.message)
      throw err
    }
    const { token, secret } = created
    changed({ kind: 'token', token: token.token })
    await audited(request, { kind: 'token', action: 'token.create', target: token.token, before: null, after: tokenView(token) })
    return reply.code(201).send({ token: token.token, token_secret: secret, scopes: token.scopes })
  })

  app.get('/admin/tokens', {
    schema: { querystring: TokensQuery, response: { 200: Type.Object({ tokens: Type.Array(TokenView) }), ...errorResponses } },
  }, async (request) => {
    const { user, consumer } = request.query
    if (user !== undefined && !(await store.getUser(user))) throw userNotFound(user)
    if (consumer !== undefined && !(await store.getConsumer(consumer))) throw consumerNotFound(consumer)
    return { tokens: (await store.listAccessTokens({ userId: user, consumerKey: consumer })).map(tokenView) }
  })

  app.post('/admin/tokens/:token/revoke', {
    bodyLimit,
    schema: { params: TokenParams, response: { 200: Type.Object({ revoked: Type.Boolean() }), ...errorResponses } },
  }, async (request) => {
    const { token } = request.params
    const before = await store.getAccessToken(token)
    if (!before || !(await store.revokeAccessToken(token))) {
      throw new ApiError(404, 'token_not_found', `No access token ${JSON.stringify(token)}`)
    }
    changed({ kind: 'token', token })
    const after = await store.getAccessToken(token)
    await audited(request, { kind: 'token', action: 'token.revoke', target: token, before: tokenView(before.token), after: after ? tokenView(after.token) : null })
    return { revoked: true }
  })
}

export default adminApi
