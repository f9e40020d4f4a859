// Which credential kinds a request carries (docs/gateway.md#which-credentials-each-operation-accepts): the caller answers 400 when there
// are two different kinds, runs the one verifier otherwise, and treats the request as
// anonymous when there is none. Cheap: no parameter is decoded unless it might be one.
import type { AuthMethod } from '../../common/identity.js'
import { isFormContentType } from '../../common/formats.js'
import { percentDecode } from './oauth/percent-encode.js'
import type { AuthRequest } from '../domain/auth.js'

/** The distinct credential kinds present, in the order oauth, basic, wsse. */
export function detectCredentials(req: AuthRequest): AuthMethod[] {
  const scheme = authorizationScheme(req)
  let oauth = scheme === 'oauth'
  const basic = scheme === 'basic'
  // `Authorization: WSSE profile="UsernameToken"` usually accompanies X-WSSE: one kind.
  const wsse = scheme === 'wsse' || req.headers['x-wsse'] !== undefined

  if (!oauth) {
    const q = req.url.indexOf('?')
    if (q !== -1 && scanForm(req.url.slice(q + 1)).credential) oauth = true
  }
  if (!oauth && req.body !== undefined && isFormContentType(req.contentType)) {
    oauth = scanForm(req.body.toString('latin1')).credential
  }

  const methods: AuthMethod[] = []
  if (oauth) methods.push('oauth')
  if (basic) methods.push('basic')
  if (wsse) methods.push('wsse')
  return methods
}

/**
 * An Authorization scheme no verifier understands (lower-cased, e.g. "bearer"), else
 * null. detectCredentials does not count it; the caller decides (401 is what a client
 * sending credentials expects, since present credentials are always verified).
 */
export function unknownAuthorizationScheme(req: AuthRequest): string | null {
  const scheme = authorizationScheme(req)
  return scheme === null || scheme === 'oauth' || scheme === 'basic' || scheme === 'wsse' ? null : scheme
}

function authorizationScheme(req: AuthRequest): string | null {
  const raw = req.headers['authorization']
  const authorization = Array.isArray(raw) ? raw[0] : raw
  if (authorization === undefined || authorization === '') return null
  let end = 0
  while (end < authorization.length && authorization.charCodeAt(end) !== 32 && authorization.charCodeAt(end) !== 9) end++
  return authorization.slice(0, end).toLowerCase()
}

/**
 * Whether form-encoded text carries OAuth credentials (oauth_consumer_key or
 * oauth_signature; a lone oauth_token, as on the authorize page, is not a credential).
 */
function scanForm(s: string): { credential: boolean } {
  let credential = false
  let start = 0
  while (start < s.length) {
    let end = s.indexOf('&', start)
    if (end === -1) end = s.length
    let nameEnd = s.indexOf('=', start)
    if (nameEnd === -1 || nameEnd > end) nameEnd = end
    let name = s.slice(start, nameEnd)
    if (name.indexOf('%') !== -1 || name.indexOf('+') !== -1) name = percentDecode(name, true) ?? ''
    if (name === 'oauth_consumer_key' || name === 'oauth_signature') credential = true
    start = end + 1
  }
  return { credential }
}
