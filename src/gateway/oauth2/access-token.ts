// An API access token verified where it is presented, with no call to the provider: a JWT
// (RFC 9068) signed with one of the provider's keys (the public halves of the keys every
// gateway already loads and polls for OpenID Connect), for this deployment's issuer and
// API resource, unexpired, and not of a revoked grant.
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose'
import type { ProviderSigningKey } from '../host/authorization.js'
import { apiResource, grantClaim } from './scopes.js'
import type { RevocationList } from './revocations.js'

export interface ApiAccessToken {
  userId: string
  clientId: string
  scopes: string[]
  grantId: string
  jti: string
  issuedAt: number
  expiresAt: number
}

export type VerifiedAccessToken = { ok: true; token: ApiAccessToken } | { ok: false; reason: string }

/** The public half of a signing key, as published in the JWKS. */
const publicJwk = (key: ProviderSigningKey) => {
  const { kty, n, e, kid, alg, use } = key.jwk as Record<string, string>
  return { kty, n, e, kid, alg, use }
}

export class AccessTokenVerifier {
  private keySet: ReturnType<typeof createLocalJWKSet> | null = null
  private keysSeen: readonly ProviderSigningKey[] | null = null

  constructor(
    /** The provider's current keys (rebuilt when they rotate). */
    private readonly keys: () => readonly ProviderSigningKey[],
    private readonly revocations: Pick<RevocationList, 'isRevoked'>,
    private readonly now: () => number = Date.now,
  ) {}

  private currentKeySet() {
    const keys = this.keys()
    if (this.keySet === null || keys !== this.keysSeen) {
      this.keySet = createLocalJWKSet({ keys: keys.map(publicJwk) })
      this.keysSeen = keys
    }
    return this.keySet
  }

  /** The token's claims when it is a live API access token of `issuer`; why not otherwise (for logs, never for the client). */
  async verify(value: string, issuer: string): Promise<VerifiedAccessToken> {
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(value, this.currentKeySet(), {
        issuer,
        audience: apiResource(issuer),
        algorithms: ['RS256'],
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat', 'sub', 'jti', 'client_id'],
        currentDate: new Date(this.now()),
      }))
    } catch (err) {
      return { ok: false, reason: (err as { code?: string }).code ?? 'invalid' }
    }
    // One audience only: a token for the API and something else is not the API's alone.
    if (Array.isArray(payload.aud) && payload.aud.length !== 1) return { ok: false, reason: 'audience' }
    const grantId = payload[grantClaim]
    const clientId = payload.client_id
    if (typeof grantId !== 'string' || typeof clientId !== 'string' || typeof payload.sub !== 'string' || typeof payload.jti !== 'string') return { ok: false, reason: 'claims' }
    if (this.revocations.isRevoked(grantId)) return { ok: false, reason: 'revoked' }
    const scope = typeof payload.scope === 'string' ? payload.scope : ''
    return {
      ok: true,
      token: { userId: payload.sub, clientId, scopes: scope.split(' ').filter((s) => s !== ''), grantId, jti: payload.jti, issuedAt: payload.iat!, expiresAt: payload.exp! },
    }
  }
}
