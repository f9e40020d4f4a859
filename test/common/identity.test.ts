// The signed identity between gateway and core (docs/gateway.md#forwarding): what the core believes.
import { createHmac, randomBytes } from 'node:crypto'
import { operationNameOf } from '../../src/common/route-table.js'
import { describe, expect, it } from 'vitest'
import { identityKey, signIdentity, verifyIdentity, type Identity } from '../../src/common/identity.js'
import { deriveKey } from '../../src/common/secrets.js'
import { respelledSignature } from '../helpers/signature-spelling.js'

const secretKey = randomBytes(32).toString('base64')
const key = identityKey(secretKey)
const req = { method: 'POST', url: '/api/statuses/update.json?x=1', host: 'localhost:8080', requestId: 'r-1', operation: operationNameOf('POST', '/api/statuses/update.json?x=1'), bodySha256: '' }
const alice: Identity = { user: 'alice', userName: 'Alice Ünïcode, "quoted"', authMethod: 'oauth', consumer: 'ck', scopes: ['read_public', 'write_public'] }
const now = 1_800_000_000_000

describe('identity signature', () => {
  it('verifies what the gateway signed, user name and scopes included', () => {
    const headers = signIdentity(key, req, alice, now)
    expect(verifyIdentity(key, headers, req, 60, now + 5_000)).toEqual({ ok: true, identity: alice, requestId: 'r-1', signed: true, operation: 'statuses/update', bodySha256: '' })
  })

  it('binds the operation and the body digest: another one, or one removed, does not verify', () => {
    const withBody = { ...req, bodySha256: 'q2H9Yx0tJ2bTn1dL5b8iU0V9Gm0k9L9u0Kq0bW1y2c4' }
    const headers = signIdentity(key, withBody, alice, now)
    expect(verifyIdentity(key, headers, req, 60, now)).toMatchObject({ ok: true, bodySha256: withBody.bodySha256, operation: 'statuses/update' })
    expect(verifyIdentity(key, { ...headers, 'x-kigo-operation': 'statuses/show' }, req, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, { ...headers, 'x-kigo-body-sha256': undefined }, req, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, { 'x-kigo-operation': 'statuses/update' }, req, 60, now).ok).toBe(false)
  })

  it('treats a request without identity headers as anonymous', () => {
    expect(verifyIdentity(key, {}, req, 60, now)).toMatchObject({ ok: true, identity: null, signed: false })
  })

  it('verifies a signed anonymous request as anonymous', () => {
    expect(verifyIdentity(key, signIdentity(key, req, null, now), req, 60, now)).toMatchObject({ ok: true, identity: null, signed: true })
  })

  it('refuses an identity claim without a signature', () => {
    expect(verifyIdentity(key, { 'x-kigo-user': 'alice' }, req, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, { 'x-kigo-scopes': 'write_public' }, req, 60, now).ok).toBe(false)
  })

  it('refuses any change to a signed value', () => {
    const headers = signIdentity(key, req, alice, now)
    const tampered: Array<Record<string, string>> = [
      { ...headers, 'x-kigo-user': 'bob' },
      { ...headers, 'x-kigo-scopes': 'read_public,write_public,write_private' },
      { ...headers, 'x-kigo-auth-method': 'basic' },
      { ...headers, 'x-kigo-consumer': 'other' },
      { ...headers, 'x-kigo-user-name': 'Mallory' },
      { ...headers, 'x-kigo-request-id': 'r-2' },
    ]
    for (const h of tampered) expect(verifyIdentity(key, h, req, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, headers, { ...req, method: 'GET' }, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, headers, { ...req, url: '/api/statuses/update.json?x=2' }, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, headers, { ...req, host: '127.0.0.1:8080' }, 60, now).ok).toBe(false)
  })

  it('refuses a stale or future signature, and another key', () => {
    const headers = signIdentity(key, req, alice, now)
    expect(verifyIdentity(key, headers, req, 60, now + 61_000).ok).toBe(false)
    expect(verifyIdentity(key, headers, req, 60, now - 61_000).ok).toBe(false)
    const other = identityKey(randomBytes(32).toString('base64'))
    expect(verifyIdentity(other, headers, req, 60, now).ok).toBe(false)
  })

  it('signs the documented lines with HMAC-SHA256 under the derived key, in unpadded base64url', () => {
    const headers = signIdentity(key, req, alice, now)
    const lines = ['v1', '1800000000', 'POST', req.url, 'localhost:8080', 'r-1', 'statuses/update', '', 'alice', encodeURIComponent(alice.userName), 'oauth', 'ck', 'read_public,write_public']
    const expected = createHmac('sha256', deriveKey(secretKey, 'identity v1')).update(lines.join('\n')).digest('base64url')
    expect(headers['x-kigo-identity-signature']).toBe(`t=1800000000, v1=${expected}`)
  })

  it('accepts one spelling of a signature: a last character that decodes to the same bytes is refused', () => {
    const headers = signIdentity(key, req, alice, now)
    const sig = headers['x-kigo-identity-signature']!
    const respelled = respelledSignature(sig)
    expect(Buffer.from(respelled.slice(respelled.indexOf('v1=') + 3), 'base64url')).toEqual(Buffer.from(sig.slice(sig.indexOf('v1=') + 3), 'base64url'))
    expect(verifyIdentity(key, { ...headers, 'x-kigo-identity-signature': respelled }, req, 60, now)).toEqual({ ok: false, reason: 'identity signature does not verify' })
  })

  it('refuses malformed signatures and repeated headers', () => {
    const headers = signIdentity(key, req, alice, now)
    expect(verifyIdentity(key, { ...headers, 'x-kigo-identity-signature': 'garbage' }, req, 60, now).ok).toBe(false)
    expect(verifyIdentity(key, { ...headers, 'x-kigo-user': ['alice', 'alice'] }, req, 60, now).ok).toBe(false)
  })
})
