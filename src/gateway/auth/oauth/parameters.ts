// Collects the parameters of an OAuth 1.0a request (RFC 5849 §3.4.1.3.1, §3.5): the
// protocol parameters (names beginning with "oauth_") from exactly one place — the
// `Authorization: OAuth` header, an application/x-www-form-urlencoded body, or the query
// — and every parameter that enters the signature base string. docs/gateway.md#oauth-10a: protocol
// parameters from more than one place, or a protocol parameter repeated, are 400.
import { isUtf8 } from 'node:buffer'
import { isFormContentType } from '../../../common/formats.js'
import type { AuthRequest } from '../../domain/auth.js'
import { percentDecode } from './percent-encode.js'

export type ParameterSource = 'header' | 'body' | 'query'

export interface OAuthParameters {
  /** Decoded `oauth_*` parameters, each present once (`realm` is not one of them). */
  protocol: Map<string, string>
  /** Where the protocol parameters came from; null when the request carried none. */
  source: ParameterSource | null
  /**
   * Decoded name/value pairs of the base string (§3.4.1.3.1): query, form body and the
   * header's parameters, without `realm` and `oauth_signature`; duplicates kept.
   */
  signed: Array<[string, string]>
  /** True when the body is form-encoded (its parameters are signed; no oauth_body_hash). */
  formBody: boolean
}

export type CollectResult = { ok: true; params: OAuthParameters } | { ok: false; message: string }

/** Longest Authorization header or query string considered (bad input stays a 4xx). */
const maxHeaderLength = 8192

/** The single value of a header, or null when it is absent; an array of several is an error. */
export function singleHeader(headers: AuthRequest['headers'], name: string): string | null | undefined {
  const v = headers[name]
  if (v === undefined) return null
  if (typeof v === 'string') return v
  if (v.length === 1) return v[0]!
  return v.length === 0 ? null : undefined
}

/** Index just after the `OAuth` scheme token when the header uses it, else -1. */
export function oauthSchemeEnd(authorization: string): number {
  // Case-insensitive "oauth" by char codes (| 0x20 lower-cases ASCII letters).
  if (authorization.length < 5) return -1
  const a = authorization
  if (
    (a.charCodeAt(0) | 0x20) !== 111 ||
    (a.charCodeAt(1) | 0x20) !== 97 ||
    (a.charCodeAt(2) | 0x20) !== 117 ||
    (a.charCodeAt(3) | 0x20) !== 116 ||
    (a.charCodeAt(4) | 0x20) !== 104
  ) {
    return -1
  }
  if (a.length === 5) return 5
  const c = a.charCodeAt(5)
  return c === 32 || c === 9 ? 6 : -1
}

export function collectOAuthParameters(req: AuthRequest): CollectResult {
  const protocol = new Map<string, string>()
  const signed: Array<[string, string]> = []
  let source: ParameterSource | null = null
  // Set inside `add`; typed by assertion so that the check after the loops is not narrowed to null.
  let duplicate = null as string | null
  let places = 0

  // One parameter from `place`: protocol parameters are recorded once, and a second
  // occurrence (in the same place or another) is a rejection.
  const add = (place: ParameterSource, name: string, value: string): void => {
    if (name.startsWith('oauth_')) {
      if (source !== place) {
        places++
        source = place
      }
      if (protocol.has(name)) duplicate ??= name
      else protocol.set(name, value)
      if (name === 'oauth_signature') return
    }
    signed.push([name, value])
  }

  const authorization = singleHeader(req.headers, 'authorization')
  if (authorization === undefined) return { ok: false, message: 'Several Authorization headers' }
  if (authorization !== null) {
    const start = oauthSchemeEnd(authorization)
    if (start !== -1) {
      const error = parseHeaderParameters(authorization, start, (n, v) => add('header', n, v))
      if (error !== null) return { ok: false, message: error }
    }
  }

  const formBody = req.body !== undefined && isFormContentType(req.contentType)
  if (formBody) {
    const body = req.body!
    if (!isUtf8(body)) return { ok: false, message: 'The form body is not UTF-8' }
    const error = parseForm(body.toString('utf8'), (n, v) => add('body', n, v))
    if (error !== null) return { ok: false, message: `The form body ${error}` }
  }

  const q = req.url.indexOf('?')
  if (q !== -1 && q + 1 < req.url.length) {
    const query = req.url.slice(q + 1)
    if (query.length > maxHeaderLength) return { ok: false, message: 'The query string is too long' }
    for (let i = 0; i < query.length; i++) {
      const c = query.charCodeAt(i)
      if (c < 33 || c > 126) return { ok: false, message: 'The query string must be percent-encoded' }
    }
    const error = parseForm(query, (n, v) => add('query', n, v))
    if (error !== null) return { ok: false, message: `The query string ${error}` }
  }

  if (places > 1) {
    return { ok: false, message: 'OAuth protocol parameters must come from one place only (header, form body or query)' }
  }
  if (duplicate !== null) return { ok: false, message: `The parameter ${duplicate} is repeated` }
  return { ok: true, params: { protocol, source, signed, formBody } }
}

/**
 * application/x-www-form-urlencoded pairs (`+` is a space; a name without "=" has an
 * empty value; empty segments are skipped). Returns an error phrase or null.
 */
function parseForm(s: string, emit: (name: string, value: string) => void): string | null {
  const n = s.length
  let start = 0
  while (start <= n) {
    let end = s.indexOf('&', start)
    if (end === -1) end = n
    if (end > start) {
      const eq = s.indexOf('=', start)
      const hasValue = eq !== -1 && eq < end
      const name = percentDecode(s.slice(start, hasValue ? eq : end), true)
      const value = hasValue ? percentDecode(s.slice(eq + 1, end), true) : ''
      if (name === null || value === null) return 'has malformed percent-encoding'
      emit(name, value)
    }
    start = end + 1
  }
  return null
}

const isSpace = (c: number): boolean => c === 32 || c === 9

/**
 * The auth-params of `Authorization: OAuth …` (RFC 5849 §3.5.1, RFC 9110 §11.2) in one
 * pass: `name="value"` (or a bare token value) separated by commas and optional white
 * space; values percent-decoded (§3.6), `realm` dropped. Returns an error or null.
 */
export function parseHeaderParameters(h: string, start: number, emit: (name: string, value: string) => void): string | null {
  const n = h.length
  if (n > maxHeaderLength) return 'The Authorization header is too long'
  let i = start
  for (;;) {
    while (i < n && (isSpace(h.charCodeAt(i)) || h.charCodeAt(i) === 44)) i++
    if (i >= n) return null
    const nameStart = i
    while (i < n) {
      const c = h.charCodeAt(i)
      if (c === 61 || c === 44 || isSpace(c)) break
      if (c < 33 || c > 126 || c === 34) return 'The Authorization header has a malformed parameter name'
      i++
    }
    const name = h.slice(nameStart, i)
    while (i < n && isSpace(h.charCodeAt(i))) i++
    if (h.charCodeAt(i) !== 61) return `The Authorization header parameter ${name} has no value`
    i++
    while (i < n && isSpace(h.charCodeAt(i))) i++
    let raw: string
    if (h.charCodeAt(i) === 34) {
      // quoted-string; a backslash quotes the next character (RFC 9110 §5.6.4).
      i++
      let valueStart = i
      raw = ''
      for (;;) {
        if (i >= n) return `The Authorization header parameter ${name} is not terminated`
        const c = h.charCodeAt(i)
        if (c === 34) break
        if (c === 92) {
          raw += h.slice(valueStart, i)
          i++
          valueStart = i
        } else if (c > 126 || (c < 32 && c !== 9)) {
          return 'The Authorization header must be ASCII (values are percent-encoded)'
        }
        i++
      }
      raw += h.slice(valueStart, i)
      i++
    } else {
      const valueStart = i
      while (i < n) {
        const c = h.charCodeAt(i)
        if (c === 44 || isSpace(c)) break
        if (c < 33 || c > 126) return 'The Authorization header must be ASCII (values are percent-encoded)'
        i++
      }
      raw = h.slice(valueStart, i)
    }
    while (i < n && isSpace(h.charCodeAt(i))) i++
    if (i < n && h.charCodeAt(i) !== 44) return 'The Authorization header parameters must be separated by commas'
    if (name !== 'realm') {
      const decodedName = percentDecode(name, false)
      const value = percentDecode(raw, false)
      if (decodedName === null || value === null) return 'The Authorization header has malformed percent-encoding'
      emit(decodedName, value)
    }
  }
}
