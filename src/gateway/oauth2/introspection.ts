// The operator's introspection of an API access token (docs/oauth2.md#revocation-and-introspection):
// `POST /admin/oauth2/introspect` with {"token": …} answers as RFC 7662 does (`active`,
// and for a live token its user, client, scopes, lifetime and issuer), checked exactly as
// the gateway checks a Bearer token (access-token.ts), against each deployment in turn. An
// inactive token's answer also says why (`reason`: expired, revoked, not an access token
// of this service), which a client's introspection at the provider never tells: the
// operator is the one who must tell a user or a developer what went wrong. Nothing is
// changed or recorded, and the token is never logged.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '../../common/typebox.js'
import { baseUrl, type Deployment, type Hosts } from '../../common/deployment.js'
import { strictValidatorCompiler } from '../registrations/route-schemas.js'
import type { AccessTokenVerifier } from './access-token.js'
import { apiResource } from './scopes.js'

export type Introspection =
  | { active: true; token_type: 'access_token'; sub: string; client_id: string; scope: string; iss: string; aud: string; exp: number; iat: number; jti: string; grant: string; deployment: Deployment }
  | { active: false; reason: 'expired' | 'revoked' | 'unknown' }

const deployments: readonly Deployment[] = ['domestic', 'global']

/** What the gateway would make of `token` as a Bearer token, on either deployment. */
export async function introspect(verifier: Pick<AccessTokenVerifier, 'verify'>, hosts: Hosts, token: string): Promise<Introspection> {
  let reason: 'expired' | 'revoked' | 'unknown' = 'unknown'
  for (const deployment of deployments) {
    const issuer = baseUrl(hosts, deployment)
    const verified = await verifier.verify(token, issuer)
    if (verified.ok) {
      const t = verified.token
      return { active: true, token_type: 'access_token', sub: t.userId, client_id: t.clientId, scope: t.scopes.join(' '), iss: issuer, aud: apiResource(issuer), exp: t.expiresAt, iat: t.issuedAt, jti: t.jti, grant: t.grantId, deployment }
    }
    // The reason of the deployment the token names (its issuer); a token of neither is unknown.
    if (verified.reason === 'revoked') reason = 'revoked'
    else if (verified.reason === 'ERR_JWT_EXPIRED') reason = 'expired'
  }
  return { active: false, reason }
}

const IntrospectBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 8192 }) }, { additionalProperties: false })

export function registerOperatorIntrospection(instance: FastifyInstance, o: { verifier: Pick<AccessTokenVerifier, 'verify'>; hosts: Hosts }): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  app.post('/admin/oauth2/introspect', { bodyLimit: 16 * 1024, schema: { body: IntrospectBody }, validatorCompiler: strictValidatorCompiler }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return introspect(o.verifier, o.hosts, request.body.token)
  })
}
