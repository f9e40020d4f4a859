// The signed identity the gateway adds to every forwarded request (docs/gateway.md#forwarding). The core
// believes X-Kigo-User only when X-Kigo-Identity-Signature verifies and is fresh.
//
// Signature header: `t=<unix seconds>, v1=<base64url HMAC-SHA256>`, over one line per
// field: version, timestamp, method, path and query, host, request id, operation (the
// route table's name for what the gateway authorized), body digest (SHA-256 of the body
// the gateway verified, when it read one), user, user name (percent-encoded), auth
// method, consumer, scopes. The key is derived from KIGO_SECRET_KEY for this purpose alone.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto'
import { deriveKey, safeEqual } from './secrets.js'

export type AuthMethod = 'oauth' | 'basic' | 'wsse'

/**
 * How the gateway knows who the request is from: a credential of the API, or `session`,
 * the reader's account session (its cookie never reaches the core), sent only with a
 * browser's GET or HEAD of a public page so that its header can name the reader. No
 * operation of the API is ever run for a `session` identity.
 */
export type IdentityMethod = AuthMethod | 'session'

export interface Identity {
  user: string
  userName: string
  authMethod: IdentityMethod
  /** OAuth consumer key; empty for Basic and WSSE. */
  consumer: string
  /** OAuth scopes; empty for Basic and WSSE. */
  scopes: string[]
}

export const identityHeaders = {
  requestId: 'x-kigo-request-id',
  user: 'x-kigo-user',
  userName: 'x-kigo-user-name',
  authMethod: 'x-kigo-auth-method',
  consumer: 'x-kigo-consumer',
  scopes: 'x-kigo-scopes',
  operation: 'x-kigo-operation',
  bodySha256: 'x-kigo-body-sha256',
  signature: 'x-kigo-identity-signature',
} as const

export interface SignedRequest {
  method: string
  /** Path and query exactly as sent on the request line. */
  url: string
  host: string
  requestId: string
  /** The route-table operation the gateway authorized; '' for none (the catch-all). */
  operation: string
  /**
   * The digest the body must have: base64url SHA-256 of a body the gateway read (a form),
   * or the client's signed oauth_body_hash of a body it streams, in base64url, prefixed
   * `sha1:` when that hash is SHA-1; '' when nothing vouches for the body.
   */
  bodySha256: string
}

/**
 * The signing key, made once into a KeyObject: HMAC with a KeyObject skips preparing the
 * key on every request (measured in the running gateway and core: one HMAC per request
 * on each side).
 */
export function identityKey(secretKey: string): KeyObject {
  return createSecretKey(deriveKey(secretKey, 'identity v1'))
}

/**
 * The signature's v1 value: base64url HMAC-SHA256. The digest is asked for as text, not as a
 * Buffer then encoded, and the core compares the texts: signing took 2.7 against 3.6 µs,
 * verifying 3.7 against 4.0 (bench/micro/identity-signature.ts, docs/performance.md#the-identity-digest-as-text).
 */
function mac(key: KeyObject, t: number, req: SignedRequest, id: Identity | null): string {
  // One line per field (see the header), written out: this runs on every signed request.
  const who = id ? `${id.user}\n${encodeURIComponent(id.userName)}\n${id.authMethod}\n${id.consumer}\n${id.scopes.join(',')}` : '\n\n\n\n'
  const text = `v1\n${t}\n${req.method.toUpperCase()}\n${req.url}\n${req.host.toLowerCase()}\n${req.requestId}\n${req.operation}\n${req.bodySha256}\n${who}`
  return createHmac('sha256', key).update(text).digest('base64url')
}

/** The X-Kigo-* headers for a forwarded request; `identity` null for an anonymous one. */
export function signIdentity(key: KeyObject, req: SignedRequest, identity: Identity | null, now = Date.now()): Record<string, string> {
  const t = Math.floor(now / 1000)
  const headers: Record<string, string> = {
    [identityHeaders.requestId]: req.requestId,
    [identityHeaders.signature]: `t=${t}, v1=${mac(key, t, req, identity)}`,
  }
  if (req.operation !== '') headers[identityHeaders.operation] = req.operation
  if (req.bodySha256 !== '') headers[identityHeaders.bodySha256] = req.bodySha256
  if (identity) {
    headers[identityHeaders.user] = identity.user
    headers[identityHeaders.userName] = encodeURIComponent(identity.userName)
    headers[identityHeaders.authMethod] = identity.authMethod
    headers[identityHeaders.consumer] = identity.consumer
    headers[identityHeaders.scopes] = identity.scopes.join(',')
  }
  return headers
}

type HeaderBag = Record<string, string | string[] | undefined>

/** The headers that claim an identity (all but the request ID and the signature). */
const userClaims = [identityHeaders.user, identityHeaders.userName, identityHeaders.authMethod, identityHeaders.consumer, identityHeaders.scopes]
const claims = [...userClaims, identityHeaders.operation, identityHeaders.bodySha256]

function one(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v
}

export type IdentityCheck =
  | {
      ok: true
      identity: Identity | null
      requestId: string | null
      signed: boolean
      /** The signed operation ('' for none); the core compares it with what it routed. */
      operation: string
      /** The signed body digest ('' for none); the core compares it with the body it reads. */
      bodySha256: string
    }
  | { ok: false; reason: string }

/**
 * What the core believes about a request. No identity headers at all: anonymous. A
 * signature that verifies and is at most `maxAgeSeconds` old (either way): the identity it
 * covers. Anything else that carries identity headers: refused.
 */
export function verifyIdentity(
  key: KeyObject,
  headers: HeaderBag,
  req: Omit<SignedRequest, 'requestId' | 'operation' | 'bodySha256'>,
  maxAgeSeconds: number,
  now = Date.now(),
): IdentityCheck {
  const sig = headers[identityHeaders.signature]
  if (sig === undefined) {
    if (claims.some((h) => headers[h] !== undefined)) return { ok: false, reason: 'identity headers without a signature' }
    return { ok: true, identity: null, requestId: null, signed: false, operation: '', bodySha256: '' }
  }
  const sigValue = one(headers, identityHeaders.signature)
  const m = sigValue && /^t=([0-9]{1,12}), v1=([A-Za-z0-9_-]{43})$/.exec(sigValue)
  if (!m) return { ok: false, reason: 'malformed identity signature' }
  const t = Number(m[1])
  if (Math.abs(now / 1000 - t) > maxAgeSeconds) return { ok: false, reason: 'stale identity signature' }
  const requestId = one(headers, identityHeaders.requestId) ?? ''
  const operation = one(headers, identityHeaders.operation) ?? ''
  const bodySha256 = one(headers, identityHeaders.bodySha256) ?? ''
  const user = one(headers, identityHeaders.user)
  let identity: Identity | null = null
  if (user !== undefined) {
    const method = one(headers, identityHeaders.authMethod)
    if (method !== 'oauth' && method !== 'basic' && method !== 'wsse' && method !== 'session') return { ok: false, reason: 'bad auth method' }
    let userName: string
    try {
      userName = decodeURIComponent(one(headers, identityHeaders.userName) ?? '')
    } catch {
      return { ok: false, reason: 'bad user name encoding' }
    }
    const scopes = one(headers, identityHeaders.scopes) ?? ''
    identity = {
      user,
      userName,
      authMethod: method,
      consumer: one(headers, identityHeaders.consumer) ?? '',
      scopes: scopes === '' ? [] : scopes.split(','),
    }
  } else if (userClaims.some((h) => headers[h] !== undefined)) {
    return { ok: false, reason: 'identity headers without a user' }
  }
  // The pattern above allows only the 43 characters of a digest's base64url: the expected
  // value's length, so the comparison is one constant-time pass over equal lengths.
  if (!safeEqual(m[2]!, mac(key, t, { method: req.method, url: req.url, host: req.host, requestId, operation, bodySha256 }, identity))) {
    return { ok: false, reason: 'identity signature does not verify' }
  }
  return { ok: true, identity, requestId: requestId || null, signed: true, operation, bodySha256 }
}
