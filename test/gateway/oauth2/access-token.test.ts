// The gateway's own verification of an API access token (src/gateway/oauth2/access-token.ts),
// without HTTP: what it accepts, and each claim or header that makes it refuse, the clock
// included (an hour-long token cannot be waited for over HTTP).
import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SignJWT, type JWTPayload } from 'jose'
import { AccessTokenVerifier } from '../../../src/gateway/oauth2/access-token.js'
import { introspect } from '../../../src/gateway/oauth2/introspection.js'
import type { SigningKey } from '../../../src/gateway/oidc/store.js'

const issuer = 'https://kigo.example'
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const kid = randomUUID()
const key: SigningKey = { kid, jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }, createdAt: new Date(), retiredAt: null }
const t0 = 1_800_000_000

function claims(over: JWTPayload = {}): JWTPayload {
  return { iss: issuer, aud: `${issuer}/api`, sub: 'alice', client_id: 'c1', scope: 'read_public write_public', jti: 'j1', iat: t0, exp: t0 + 3600, kigo_grant: 'g1', ...over }
}

const sign = (payload: JWTPayload, header: Record<string, unknown> = {}, signingKey = privateKey) => new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid, ...header }).sign(signingKey)

function verifier(at = t0 + 10, revoked: string[] = []) {
  return new AccessTokenVerifier(() => [key], { isRevoked: (g) => revoked.includes(g) }, () => at * 1000)
}

describe('AccessTokenVerifier', () => {
  it('accepts a live token of this issuer for its API, with its user, client, scopes and grant', async () => {
    expect(await verifier().verify(await sign(claims()), issuer)).toEqual({
      ok: true,
      token: { userId: 'alice', clientId: 'c1', scopes: ['read_public', 'write_public'], grantId: 'g1', jti: 'j1', issuedAt: t0, expiresAt: t0 + 3600 },
    })
  })

  it('refuses it once expired', async () => {
    expect((await verifier(t0 + 3601).verify(await sign(claims()), issuer)).ok).toBe(false)
  })

  it('refuses it once its grant is revoked', async () => {
    expect((await verifier(t0 + 10, ['g1']).verify(await sign(claims()), issuer)).ok).toBe(false)
  })

  describe('a token verified before, sent again to the same gateway', () => {
    /** One verifier whose clock, revocations and keys the test moves. */
    function moving() {
      const state = { at: t0 + 10, revoked: [] as string[], keys: [key] as SigningKey[] }
      const v = new AccessTokenVerifier(() => state.keys, { isRevoked: (g) => state.revoked.includes(g) }, () => state.at * 1000)
      return { state, v }
    }

    it('is accepted again with the same claims', async () => {
      const { v } = moving()
      const token = await sign(claims())
      const first = await v.verify(token, issuer)
      expect(first.ok).toBe(true)
      expect(await v.verify(token, issuer)).toEqual(first)
    })

    it('is refused once it expires, once its grant is revoked, and for the other deployment', async () => {
      const { state, v } = moving()
      const token = await sign(claims())
      expect((await v.verify(token, issuer)).ok).toBe(true)
      expect((await v.verify(token, 'https://other.example')).ok).toBe(false)
      state.revoked = ['g1']
      expect(await v.verify(token, issuer)).toEqual({ ok: false, reason: 'revoked' })
      state.revoked = []
      expect((await v.verify(token, issuer)).ok).toBe(true)
      state.at = t0 + 3600
      expect((await v.verify(token, issuer)).ok).toBe(false)
      expect((await v.verify(token, issuer)).ok).toBe(false)
    })

    it('is refused once the key that signed it is no longer the provider\'s', async () => {
      const { state, v } = moving()
      const token = await sign(claims())
      expect((await v.verify(token, issuer)).ok).toBe(true)
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
      const otherKid = randomUUID()
      state.keys = [{ kid: otherKid, jwk: { ...other.export({ format: 'jwk' }), kid: otherKid, alg: 'RS256', use: 'sig' }, createdAt: new Date(), retiredAt: null }]
      expect((await v.verify(token, issuer)).ok).toBe(false)
    })

    it('lends nothing to a token that differs from it in one character', async () => {
      const { v } = moving()
      const token = await sign(claims())
      expect((await v.verify(token, issuer)).ok).toBe(true)
      const last = token.at(-2) === 'A' ? 'B' : 'A'
      expect((await v.verify(`${token.slice(0, -2)}${last}${token.at(-1)!}`, issuer)).ok).toBe(false)
      const [h, p, sig] = token.split('.')
      const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), scope: 'read_public write_public private_timeline' })).toString('base64url')
      expect((await v.verify(`${h}.${widened}.${sig}`, issuer)).ok).toBe(false)
    })
  })

  const refused: Array<[string, () => Promise<string>]> = [
    ['another issuer (the other deployment)', () => sign(claims({ iss: 'https://other.example' }))],
    ['another audience (another resource)', () => sign(claims({ aud: 'https://kigo.example/other' }))],
    ['two audiences', () => sign(claims({ aud: [`${issuer}/api`, 'https://elsewhere.example'] }))],
    ['no grant', () => sign(claims({ kigo_grant: undefined }))],
    ['no expiry', () => sign(claims({ exp: undefined }))],
    ['no client_id', () => sign(claims({ client_id: undefined }))],
    ['the typ of an ID token', () => sign(claims(), { typ: 'JWT' })],
    ['another key', () => sign(claims(), {}, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)],
  ]
  for (const [name, make] of refused) {
    it(`refuses ${name}`, async () => {
      expect((await verifier().verify(await make(), issuer)).ok).toBe(false)
    })
  }

  it('gives the operator\'s introspection its reason: expired, revoked, or unknown (another issuer), and the deployment of a live token', async () => {
    const hosts = { domesticHost: 'kigo.example', globalHost: 'global.example', publicScheme: 'https' as const }
    const token = await sign(claims())
    expect(await introspect(verifier(), hosts, token)).toMatchObject({ active: true, sub: 'alice', deployment: 'domestic', iss: issuer, aud: `${issuer}/api`, grant: 'g1' })
    expect(await introspect(verifier(), hosts, await sign(claims({ iss: 'https://global.example', aud: 'https://global.example/api' })))).toMatchObject({ active: true, deployment: 'global' })
    expect(await introspect(verifier(t0 + 3600), hosts, token)).toEqual({ active: false, reason: 'expired' })
    expect(await introspect(verifier(t0 + 10, ['g1']), hosts, token)).toEqual({ active: false, reason: 'revoked' })
    expect(await introspect(verifier(), hosts, await sign(claims({ iss: 'https://other.example' })))).toEqual({ active: false, reason: 'unknown' })
  })
})
