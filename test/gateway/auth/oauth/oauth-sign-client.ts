// Requests signed by the independent npm `oauth-sign` library (request's signer), so that
// verifier tests do not sign with the code under test.
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import type { AuthRequest } from '../../../../src/gateway/auth/types.js'
import { authRequest, form } from '../fixtures.js'

type Params = Record<string, string | string[]>
// The module's plain functions (no `this`): they may be passed around on their own.
interface OAuthSign {
  hmacsign: (method: string, baseUri: string, params: Params, consumerSecret: string, tokenSecret: string) => string
  hmacsign256: (method: string, baseUri: string, params: Params, consumerSecret: string, tokenSecret: string) => string
  rfc3986: (s: string) => string
}
export const oauthSign = createRequire(import.meta.url)('oauth-sign') as OAuthSign

export interface SignOptions {
  method?: string
  scheme?: 'http' | 'https'
  host?: string
  /** Path and query. */
  url?: string
  /** Form body (application/x-www-form-urlencoded), signed. */
  body?: string
  consumer: { key: string; secret: string }
  token: { token: string; secret: string }
  signatureMethod?: 'HMAC-SHA1' | 'HMAC-SHA256'
  nonce?: string
  timestamp?: number
  /** Further oauth_* parameters (oauth_version, oauth_body_hash…). */
  extra?: Record<string, string>
  now?: number
}

function addAll(target: Params, query: string): void {
  for (const [k, v] of new URLSearchParams(query)) {
    const prev = target[k]
    target[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
  }
}

/** The protocol parameters, signature included, for the request `o` describes. */
export function signParameters(o: SignOptions): Record<string, string> {
  const now = o.now ?? Date.now()
  const scheme = o.scheme ?? 'http'
  const host = o.host ?? 'api.example.com'
  const url = o.url ?? '/api/statuses/update.json'
  const method = o.method ?? 'POST'
  const protocol: Record<string, string> = {
    oauth_consumer_key: o.consumer.key,
    oauth_token: o.token.token,
    oauth_signature_method: o.signatureMethod ?? 'HMAC-SHA1',
    oauth_timestamp: String(o.timestamp ?? Math.floor(now / 1000)),
    oauth_nonce: o.nonce ?? randomBytes(12).toString('hex'),
    ...o.extra,
  }
  const all: Params = { ...protocol }
  const q = url.indexOf('?')
  if (q !== -1) addAll(all, url.slice(q + 1))
  if (o.body !== undefined) addAll(all, o.body)
  const baseUri = `${scheme}://${host}${q === -1 ? url : url.slice(0, q)}`
  const sign = protocol.oauth_signature_method === 'HMAC-SHA256' ? oauthSign.hmacsign256 : oauthSign.hmacsign
  return { ...protocol, oauth_signature: sign(method, baseUri, all, o.consumer.secret, o.token.secret) }
}

export function authorizationHeader(params: Record<string, string>, realm = 'kigo'): string {
  return `OAuth realm="${realm}", ` + Object.entries(params).map(([k, v]) => `${k}="${oauthSign.rfc3986(v)}"`).join(', ')
}

/** A request signed in the Authorization header. */
export function signedRequest(o: SignOptions): AuthRequest {
  const params = signParameters(o)
  return authRequest({
    method: o.method ?? 'POST',
    scheme: o.scheme ?? 'http',
    host: o.host ?? 'api.example.com',
    url: o.url ?? '/api/statuses/update.json',
    contentType: o.body === undefined ? undefined : form,
    body: o.body,
    now: o.now ?? Date.now(),
    headers: { authorization: authorizationHeader(params) },
  })
}
