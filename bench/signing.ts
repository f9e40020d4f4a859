// Client-side credentials for the benchmark's authenticated scenarios, built with
// node:crypto only so that the load generator's cost per request is small and the
// same for every method: OAuth 1.0a HMAC-SHA1 (RFC 5849 §3.4), WSSE UsernameToken
// (docs/gateway.md#wsse-usernametoken) and HTTP Basic (RFC 7617).
import { createHash, createHmac, randomBytes } from 'node:crypto'

export interface OAuthCredentials {
  consumerKey: string
  consumerSecret: string
  token: string
  tokenSecret: string
}

export interface OAuthRequest {
  method: string
  /** Base string URI (RFC 5849 §3.4.1.2): scheme, lower-cased host (default port dropped), path. */
  baseUri: string
  /** Query and form-body parameters, decoded (RFC 5849 §3.4.1.3.1). */
  params?: Array<[string, string]>
  /** Fixed values for tests; fresh ones otherwise. */
  nonce?: string
  timestamp?: number
}

/** RFC 5849 §3.6: RFC 3986 unreserved characters stay, everything else is %XX (upper case). */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** RFC 5849 §3.4.1: METHOD&base-uri&normalized-parameters. */
export function signatureBaseString(method: string, baseUri: string, params: Array<[string, string]>): string {
  const normalized = params
    .map(([k, v]) => [percentEncode(k), percentEncode(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  return `${method.toUpperCase()}&${percentEncode(baseUri)}&${percentEncode(normalized)}`
}

/** The OAuth 1.0a protocol parameters of one request, signature last, with a unique nonce (RFC 5849 §3.4). */
export function oauthParameters(creds: OAuthCredentials, req: OAuthRequest): Array<[string, string]> {
  const protocol: Array<[string, string]> = [
    ['oauth_consumer_key', creds.consumerKey],
    ['oauth_token', creds.token],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', String(req.timestamp ?? Math.floor(Date.now() / 1000))],
    ['oauth_nonce', req.nonce ?? randomBytes(16).toString('hex')],
    ['oauth_version', '1.0'],
  ]
  const base = signatureBaseString(req.method, req.baseUri, [...(req.params ?? []), ...protocol])
  const key = `${percentEncode(creds.consumerSecret)}&${percentEncode(creds.tokenSecret)}`
  protocol.push(['oauth_signature', createHmac('sha1', key).update(base).digest('base64')])
  return protocol
}

/** The `Authorization: OAuth …` header value for one request (RFC 5849 §3.5.1). */
export function oauthAuthorization(creds: OAuthCredentials, req: OAuthRequest): string {
  return `OAuth ${oauthParameters(creds, req).map(([k, v]) => `${k}="${percentEncode(v)}"`).join(', ')}`
}

export interface WsseOptions {
  /** Raw nonce bytes; 16 fresh random bytes otherwise. */
  nonce?: Buffer
  /** ISO 8601 creation time; now otherwise. */
  created?: string
}

/**
 * The X-WSSE header value (docs/gateway.md#wsse-usernametoken): PasswordDigest = Base64(SHA-1(nonce ‖ Created ‖
 * password)), the nonce sent as Base64 of the raw bytes that were hashed (the
 * XML::Atom convention).
 */
export function wsseHeader(username: string, password: string, options: WsseOptions = {}): string {
  const nonce = options.nonce ?? randomBytes(16)
  const created = options.created ?? new Date().toISOString()
  const digest = createHash('sha1').update(nonce).update(created, 'utf8').update(password, 'utf8').digest('base64')
  return `UsernameToken Username="${username}", PasswordDigest="${digest}", Nonce="${nonce.toString('base64')}", Created="${created}"`
}

/** `Authorization: Basic …` (RFC 7617, UTF-8). */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}
