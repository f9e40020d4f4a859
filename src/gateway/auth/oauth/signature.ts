// Signature methods (RFC 5849 §3.4.2–3.4.4; HMAC-SHA256 as widely deployed, docs/gateway.md#oauth-10a):
// HMAC-SHA1 always, HMAC-SHA256 when configured (on by default), PLAINTEXT only when
// configured and only over HTTPS (§3.4.4 sends the secrets in the clear).
import { createHmac } from 'node:crypto'
import { percentEncode } from './percent-encode.js'

export type SignatureMethod = 'HMAC-SHA1' | 'HMAC-SHA256' | 'PLAINTEXT'

export interface SignatureMethodOptions {
  hmacSha256: boolean
  plaintext: boolean
}

/** The method when it is accepted for this request, else null (400 signature_method_rejected). */
export function acceptedSignatureMethod(name: string, scheme: 'http' | 'https', opts: SignatureMethodOptions): SignatureMethod | null {
  if (name === 'HMAC-SHA1') return name
  if (name === 'HMAC-SHA256') return opts.hmacSha256 ? name : null
  if (name === 'PLAINTEXT') return opts.plaintext && scheme === 'https' ? name : null
  return null
}

/** §3.4.2: encode(client secret) & encode(token secret); the "&" is always there. */
export function signingKey(consumerSecret: string, tokenSecret: string): string {
  return percentEncode(consumerSecret) + '&' + percentEncode(tokenSecret)
}

/**
 * The expected `oauth_signature` (decoded form). PLAINTEXT (§3.4.4) is the signing key
 * itself and ignores the base string.
 */
export function computeSignature(method: SignatureMethod, baseString: string, consumerSecret: string, tokenSecret: string): string {
  const key = signingKey(consumerSecret, tokenSecret)
  if (method === 'PLAINTEXT') return key
  return createHmac(method === 'HMAC-SHA1' ? 'sha1' : 'sha256', key).update(baseString).digest('base64')
}
