// The operator API's access tokens, issued without the browser flow
// (docs/gateway.md#the-operator-api-and-dashboard): issue one (its secret shown once), list, revoke.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import { scopesBeyondRegistration } from '../store/validation.js'
import { NotFound, type AccessToken } from '../store/types.js'
import { bodyLimit, consumerNotFound, errorResponses, Key, ScopeList, Timestamp, UserId, userNotFound, type AdminRouteOptions } from '../registrations/admin-routes.js'
import { isoSeconds } from '../../common/time.js'
import { operatorActor } from '../audit/audited.js'

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

const tokenView = (t: AccessToken) => ({
  token: t.token,
  consumer: t.consumerKey,
  user: t.userId,
  scopes: t.scopes,
  created_at: isoSeconds(t.createdAt),
  revoked_at: t.revokedAt === null ? null : isoSeconds(t.revokedAt),
})

export async function adminTokens(instance: FastifyInstance, { store, audited, changed }: AdminRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()

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
    await audited(operatorActor(request), { kind: 'token', action: 'token.create', target: token.token, before: null, after: tokenView(token) })
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
    await audited(operatorActor(request), { kind: 'token', action: 'token.revoke', target: token, before: tokenView(before.token), after: after ? tokenView(after.token) : null })
    return { revoked: true }
  })
}
