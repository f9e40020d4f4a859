// An API access token verified where it is presented, with no call to the provider: a JWT
// (RFC 9068) signed with one of the provider's keys (the public halves of the keys every
// gateway already loads and polls for OpenID Connect), for this deployment's issuer and
// API resource, unexpired, and not of a revoked grant.
//
// A token verified once is remembered until it expires (a bounded LRU, keyed by the whole
// token): its signature, issuer, audience and type hold for as long as the keys it was
// checked with, so a client that sends the same token again pays a map look-up instead of
// an RSA verification, which costs more than an OAuth 1.0a signature and its nonce claim
// (docs/performance.md). Its expiry and its grant's revocation are checked on every
// request; the whole memory is dropped when the provider's keys change.
import { LRUCache } from 'lru-cache'
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

/** Tokens remembered at most: a few MB of tokens of about 1 KB. */
const maxRemembered = 10_000

export class AccessTokenVerifier {
  private keySet: ReturnType<typeof createLocalJWKSet> | null = null
  private keysSeen: readonly ProviderSigningKey[] | null = null
  /** Token → the issuer it was verified for and its claims, until it expires. */
  private readonly verified = new LRUCache<string, { issuer: string; token: ApiAccessToken }>({ max: maxRemembered })

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
      // A token is only as good as the key that signed it: nothing verified before holds now.
      this.verified.clear()
    }
    return this.keySet
  }

  /** The token's claims when it is a live API access token of `issuer`; why not otherwise (for logs, never for the client). */
  async verify(value: string, issuer: string): Promise<VerifiedAccessToken> {
    const keySet = this.currentKeySet()
    const known = this.verified.get(value)
    if (known !== undefined && known.issuer === issuer) {
      if (known.token.expiresAt <= Math.floor(this.now() / 1000)) {
        this.verified.delete(value)
        return { ok: false, reason: 'ERR_JWT_EXPIRED' }
      }
      return this.revocations.isRevoked(known.token.grantId) ? { ok: false, reason: 'revoked' } : { ok: true, token: known.token }
    }
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(value, keySet, {
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
    const scope = typeof payload.scope === 'string' ? payload.scope : ''
    const token: ApiAccessToken = { userId: payload.sub, clientId, scopes: scope.split(' ').filter((s) => s !== ''), grantId, jti: payload.jti, issuedAt: payload.iat!, expiresAt: payload.exp! }
    Object.freeze(token.scopes)
    this.verified.set(value, { issuer, token: Object.freeze(token) })
    if (this.revocations.isRevoked(grantId)) return { ok: false, reason: 'revoked' }
    return { ok: true, token }
  }
}
