// OAuth 1.0a HMAC-SHA1 headers made by hand (RFC 5849 §3.4), for requests a client
// library will not make: raw request targets, tampered or extra protocol parameters.
import { createHmac, randomBytes } from 'node:crypto'

export interface OAuthCredentials {
  consumerKey: string
  consumerSecret: string
  token: string
  tokenSecret: string
}

/** RFC 5849 §3.6: unreserved characters only, hex in upper case. */
export const percentEncode = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** The protocol parameters of a request signed now with a fresh nonce; `over` replaces or adds parameters. */
export function protocolParams(c: OAuthCredentials, over: Record<string, string> = {}): Record<string, string> {
  return {
    oauth_consumer_key: c.consumerKey,
    oauth_token: c.token,
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(Math.floor(Date.now() / 1000)),
    oauth_nonce: randomBytes(8).toString('hex'),
    oauth_version: '1.0',
    ...over,
  }
}

/** The signature over `method`, the base string URI and every signed parameter pair (§3.4.1). */
export function hmacSha1Signature(c: OAuthCredentials, method: string, baseUri: string, pairs: Iterable<[string, string]>): string {
  // §3.4.1.3.2: sort by encoded name, then by encoded value.
  const normalized = [...pairs]
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort(([a, b], [c, d]) => (a < c ? -1 : a > c ? 1 : b < d ? -1 : b > d ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  const base = [method, percentEncode(baseUri), percentEncode(normalized)].join('&')
  return createHmac('sha1', `${percentEncode(c.consumerSecret)}&${percentEncode(c.tokenSecret)}`).update(base).digest('base64')
}

/** `OAuth k="v", …` with the signature last. */
export function authorizationHeader(params: Record<string, string>, signature: string): string {
  return 'OAuth ' + Object.entries({ ...params, oauth_signature: signature }).map(([k, v]) => `${k}="${percentEncode(v)}"`).join(', ')
}
