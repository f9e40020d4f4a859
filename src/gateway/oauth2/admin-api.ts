// The operator API's side of OAuth 2.0 for an OAuth 1.0a application
// (docs/oauth2.md#for-an-oauth-10a-application): `POST /admin/apps/{key}/oauth2` turns it on
// (`kigo apps oauth2 KEY`, `kigo apps add … --oauth2`), answering the new client's
// client_id and, for a confidential client, its client_secret, shown this once.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import { isoSeconds } from '../../common/time.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'
import { InvalidInput } from '../store/validation.js'
import { OAuth2Refused, type OAuth2Applications } from './applications.js'

export interface OAuth2AppsAdminOptions {
  applications: Pick<OAuth2Applications, 'turnOn'>
  audit?: Pick<AuditStore, 'record'>
}

/** The optional body: {"redirect_uri": URL} (the application's callback otherwise), {"public": true}. */
function turnOnBody(body: unknown): { redirect_uri?: string; public?: boolean } {
  if (body === undefined || body === null) return {}
  const bad = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid request body: ${message}`)
  if (typeof body !== 'object' || Array.isArray(body)) throw bad('send a JSON object')
  const b = body as Record<string, unknown>
  const unknown = Object.keys(b).filter((k) => k !== 'redirect_uri' && k !== 'public')
  if (unknown.length > 0) throw bad(`unknown field ${unknown[0]}`)
  if (b.redirect_uri !== undefined && (typeof b.redirect_uri !== 'string' || b.redirect_uri.length === 0 || b.redirect_uri.length > 2048)) throw bad('redirect_uri must be a URL')
  if (b.public !== undefined && typeof b.public !== 'boolean') throw bad('public must be true or false')
  return b
}
const AppParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 256 }) })
const TurnedOn = Type.Object({
  consumer_key: Type.String(),
  name: Type.String(),
  owner: Type.String(),
  scopes: Type.Array(Type.String()),
  client_id: Type.String(),
  type: Type.Union([Type.Literal('confidential'), Type.Literal('public')]),
  redirect_uris: Type.Array(Type.String()),
  client_secret: Type.Optional(Type.String()),
  created_at: Type.String(),
})

const refusal = (err: OAuth2Refused): ApiError => {
  switch (err.reason) {
    case 'app_not_found':
      return new ApiError(404, 'consumer_not_found', err.message)
    case 'already_on':
      return new ApiError(409, 'conflict', err.message)
    case 'redirect_uri_required':
      return new ApiError(400, 'invalid_redirect_uri', err.message)
  }
}

export async function oauth2AppsAdminApi(instance: FastifyInstance, options: OAuth2AppsAdminOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const audited = auditTrail(options.audit, app.log)

  app.post('/admin/apps/:key/oauth2', {
    bodyLimit: 64 * 1024,
    schema: { params: AppParams, response: { 201: TurnedOn } },
  }, async (request, reply) => {
    const body = turnOnBody(request.body)
    let on: Awaited<ReturnType<OAuth2Applications['turnOn']>>
    try {
      on = await options.applications.turnOn(request.params.key, { ...(body.redirect_uri !== undefined ? { redirectUri: body.redirect_uri } : {}), public: body.public === true })
    } catch (err) {
      if (err instanceof OAuth2Refused) throw refusal(err)
      if (err instanceof InvalidInput) throw new ApiError(400, 'invalid_redirect_uri', `Invalid request body: ${err.message}`)
      throw err
    }
    reply.header('cache-control', 'no-store')
    const view = {
      consumer_key: on.consumer.key,
      name: on.consumer.name,
      owner: on.consumer.ownerId,
      scopes: on.consumer.scopes,
      client_id: on.client.clientId,
      type: on.client.public ? ('public' as const) : ('confidential' as const),
      redirect_uris: on.client.redirectUris,
      created_at: isoSeconds(on.client.createdAt),
    }
    await audited(operatorActor(request), { kind: 'app', action: 'app.oauth2', target: on.consumer.key, before: null, after: view })
    return reply.code(201).send({ ...view, ...(on.secret === null ? {} : { client_secret: on.secret }) })
  })
}
