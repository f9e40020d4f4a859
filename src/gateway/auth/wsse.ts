// WSSE UsernameToken (docs/gateway.md#wsse-usernametoken; Atom Authentication, xml.com 2003):
//   X-WSSE: UsernameToken Username="…", PasswordDigest="…", Nonce="…", Created="…"
//   PasswordDigest = Base64(SHA-1(nonce bytes ‖ Created ‖ API password))
// Clients disagree on the nonce bytes: XML::Atom-style clients send Base64 of raw bytes
// and hash the raw bytes ('base64'); others hash the nonce text as sent ('literal'). Both
// are accepted, and the one that verified is recorded on the principal.
import { hash } from 'node:crypto'
import { randomToken, safeEqual } from '../../common/secrets.js'
import type { ReplayCache } from '../replay/types.js'
import { userIdPattern } from '../domain/identifiers.js'
import { claimNonce, defaultRetryAfterSeconds, failure, type AuthFailure } from '../domain/auth-results.js'
import type { AuthRequest, AuthResult, CredentialLookup } from '../domain/auth.js'

export interface WsseVerifyOptions {
  /** Accepted distance of Created from the gateway's clock, seconds (default: 300). */
  windowSeconds: number
}

export interface UsernameToken {
  username: string
  passwordDigest: string
  nonce: string
  created: string
}

const maxHeaderLength = 4096
const dummyPassword = randomToken(24)

function malformed(message: string): AuthFailure {
  return failure('wsse', 400, 'malformed_credentials', message, 'malformed')
}

/** Whether `header` from `start` to `end` spells `name` in any case (ASCII letters). */
function namedAt(header: string, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false
  for (let j = 0; j < name.length; j++) {
    const c = header.charCodeAt(start + j)
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== name.charCodeAt(j)) return false
  }
  return true
}

/** The white space String.prototype.trim removes, among the Latin-1 characters a header holds. */
function isTrimmed(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 160
}

/** The four fields as the format names them, and in lower case, found by their lengths (all differ). */
const fieldLabels = ['Username', 'PasswordDigest', 'Nonce', 'Created'] as const
const fieldNames = fieldLabels.map((label) => label.toLowerCase())
const fieldOfLength = new Map(fieldNames.map((name, i) => [name.length, i]))

/**
 * Parses the X-WSSE value in one pass: `UsernameToken` then `Name="value"` pairs in any
 * order, separated by "," with optional white space; names in any case, other names
 * ignored. Returns the token or an error. Reads the text in place: a request's token
 * costs four slices, not a copy per name (this runs on every WSSE request).
 */
export function parseUsernameToken(header: string): UsernameToken | string {
  if (header.length > maxHeaderLength) return 'The X-WSSE header is too long'
  const scheme = 'usernametoken'
  let i = 0
  const n = header.length
  while (i < n && header.charCodeAt(i) === 32) i++
  if (!namedAt(header, i, Math.min(n, i + scheme.length), scheme)) return 'X-WSSE must be a UsernameToken'
  i += scheme.length
  const found: Array<string | undefined> = [undefined, undefined, undefined, undefined]
  for (;;) {
    while (i < n && (header.charCodeAt(i) === 32 || header.charCodeAt(i) === 9 || header.charCodeAt(i) === 44)) i++
    if (i >= n) break
    const eq = header.indexOf('=', i)
    if (eq === -1) return 'X-WSSE has a field without a value'
    let start = i
    let end = eq
    while (start < end && isTrimmed(header.charCodeAt(start))) start++
    while (end > start && isTrimmed(header.charCodeAt(end - 1))) end--
    if (header.charCodeAt(eq + 1) !== 34) return `X-WSSE field ${header.slice(start, end)} must be quoted`
    const close = header.indexOf('"', eq + 2)
    if (close === -1) return `X-WSSE field ${header.slice(start, end)} is not terminated`
    const field = fieldOfLength.get(end - start)
    if (field !== undefined && namedAt(header, start, end, fieldNames[field]!)) {
      if (found[field] !== undefined) return `X-WSSE field ${fieldLabels[field]} is repeated`
      found[field] = header.slice(eq + 2, close)
    }
    i = close + 1
    const c = header.charCodeAt(i)
    if (i < n && c !== 44 && c !== 32 && c !== 9) return 'X-WSSE fields must be separated by commas'
  }
  for (let f = 0; f < fieldNames.length; f++) {
    if (!found[f]) return `X-WSSE requires ${fieldLabels[f]}`
  }
  return { username: found[0]!, passwordDigest: found[1]!, nonce: found[2]!, created: found[3]! }
}

/** The number written by the `count` decimal digits at `at`, or -1 when one is not a digit. */
function digitsAt(s: string, at: number, count: number): number {
  let value = 0
  for (let j = at; j < at + count; j++) {
    const d = s.charCodeAt(j) - 48
    if (!(d >= 0 && d <= 9)) return -1
    value = value * 10 + d
  }
  return value
}

/**
 * ISO 8601 date-time with a zone (`Z` or ±hh:mm / ±hhmm), optional fractional seconds
 * (1 to 9 digits, after "." or ","): milliseconds since the epoch, or NaN when it is not
 * one. Read character by character: this runs on every WSSE request, where a regular
 * expression cost 1.2 µs.
 */
export function parseCreated(s: string): number {
  const n = s.length
  if (n < 20 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN
  const year = digitsAt(s, 0, 4)
  const month = digitsAt(s, 5, 2)
  const day = digitsAt(s, 8, 2)
  const hour = digitsAt(s, 11, 2)
  const minute = digitsAt(s, 14, 2)
  const second = digitsAt(s, 17, 2)
  if (year < 0 || day < 0 || month < 1 || month > 12 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return NaN
  let i = 19
  let ms = 0
  if (s.charCodeAt(i) === 46 || s.charCodeAt(i) === 44) {
    const first = ++i
    while (i < n && i - first < 10 && digitsAt(s, i, 1) >= 0) i++
    const count = i - first
    if (count < 1 || count > 9) return NaN
    ms = digitsAt(s, first, Math.min(3, count)) * (count === 1 ? 100 : count === 2 ? 10 : 1)
  }
  let offset = 0
  const zone = s.charCodeAt(i)
  if (zone === 90 || zone === 122) {
    if (i + 1 !== n) return NaN
  } else if (zone === 43 || zone === 45) {
    const colon = s.charCodeAt(i + 3) === 58 ? 1 : 0
    if (i + 5 + colon !== n) return NaN
    const oh = digitsAt(s, i + 1, 2)
    const om = digitsAt(s, i + 3 + colon, 2)
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return NaN
    offset = (zone === 45 ? -1 : 1) * (oh * 60 + om) * 60_000
  } else return NaN
  const t = Date.UTC(year, month - 1, day, hour, minute, second)
  // Date.UTC rolls 31 February into March: reject days the month does not have (every
  // month has days 1 to 28).
  if (day < 1 || (day > 28 && new Date(t).getUTCDate() !== day)) return NaN
  return t + ms - offset
}

/** Standard Base64 (padding optional), decoded; null when the text is not Base64. */
function strictBase64(s: string): Buffer | null {
  let end = s.length
  while (end > 0 && s.charCodeAt(end - 1) === 61) end--
  if (end === 0 || s.length - end > 2 || end % 4 === 1) return null
  for (let j = 0; j < end; j++) {
    const c = s.charCodeAt(j)
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47)) return null
  }
  return Buffer.from(s, 'base64')
}

/** Base64(SHA-1(nonce ‖ created ‖ password)). */
export function wsseDigest(nonce: Buffer, created: string, password: string): string {
  return hash('sha1', Buffer.concat([nonce, Buffer.from(created, 'latin1'), Buffer.from(password, 'utf8')]), 'base64')
}

/** The request's UsernameToken, or the 400 a missing or malformed one gets. */
export function readWsse(req: AuthRequest): UsernameToken | AuthFailure {
  const header = req.headers['x-wsse']
  if (header === undefined) return malformed('WSSE authentication requires the X-WSSE header')
  if (typeof header !== 'string') return malformed('Send one X-WSSE header')
  const token = parseUsernameToken(header)
  return typeof token === 'string' ? malformed(token) : token
}

/** Verifies a parsed UsernameToken at time `now` (ms) and claims its nonce. */
export async function verifyUsernameToken(
  token: UsernameToken,
  now: number,
  lookup: CredentialLookup,
  replay: ReplayCache,
  opts: WsseVerifyOptions,
): Promise<AuthResult> {
  const created = parseCreated(token.created)
  if (Number.isNaN(created)) return malformed('X-WSSE Created must be an ISO 8601 date-time with a time zone')
  if (Math.abs(created - now) > opts.windowSeconds * 1000) {
    return failure('wsse', 401, 'stale', `X-WSSE Created is more than ${opts.windowSeconds} seconds from the server's clock`, 'stale')
  }

  const wellFormed = userIdPattern.test(token.username)
  const record = wellFormed ? await lookup.apiPassword(token.username) : null
  const password = record?.apiPassword ?? dummyPassword

  // The Base64 convention is tried first (when the nonce is Base64), then the literal one.
  // The digests made depend only on the token and on whether it verifies, never on the
  // user named (an unknown one is checked against a dummy password), so the time taken
  // shows nothing the answer does not. Header text is Latin-1 in Node, so 'latin1' gives
  // back the octets exactly as sent.
  const rawBytes = strictBase64(token.nonce)
  const literalBytes = Buffer.from(token.nonce, 'latin1')
  const base64Ok = rawBytes !== null && safeEqual(token.passwordDigest, wsseDigest(rawBytes, token.created, password))
  const literalOk = !base64Ok && safeEqual(token.passwordDigest, wsseDigest(literalBytes, token.created, password))

  const attemptedUser = wellFormed ? { attemptedUser: token.username } : {}
  if (record === null || (!base64Ok && !literalOk)) {
    return failure('wsse', 401, 'bad_credentials', 'Wrong Username or PasswordDigest', 'bad_credentials', attemptedUser)
  }
  const style = base64Ok ? 'base64' : 'literal'
  const nonceBytes = base64Ok ? rawBytes : literalBytes

  // Scoped to (user, nonce bytes): the same nonce sent in the other convention is the
  // same nonce. A Created up to `window` ahead stays acceptable for 2 × window.
  const key = `wsse:${record.userId}:${nonceBytes.toString('base64')}`
  const replayed = await claimNonce(replay, key, 2 * opts.windowSeconds + 1, 'wsse', defaultRetryAfterSeconds, () =>
    failure('wsse', 401, 'replay', 'This X-WSSE Nonce was already used', 'replay', attemptedUser),
    `wsse:${record.userId}`,
  )
  if (replayed !== null) return replayed

  return {
    kind: 'ok',
    principal: {
      userId: record.userId,
      userName: record.userName,
      method: 'wsse',
      consumerKey: '',
      scopes: [],
      wsseNonceStyle: style,
    },
  }
}
