// WSSE UsernameToken (SPEC §4.3; Atom Authentication, xml.com 2003):
//   X-WSSE: UsernameToken Username="…", PasswordDigest="…", Nonce="…", Created="…"
//   PasswordDigest = Base64(SHA-1(nonce bytes ‖ Created ‖ API password))
// Clients disagree on the nonce bytes: XML::Atom-style clients send Base64 of raw bytes
// and hash the raw bytes ('base64'); others hash the nonce text as sent ('literal'). Both
// are accepted, and the one that verified is recorded on the principal.
import { hash } from 'node:crypto'
import { randomToken, safeEqual } from '../../common/secrets.js'
import type { ReplayCache } from '../replay/types.js'
import { userIdPattern } from '../store/types.js'
import { claimNonce, defaultRetryAfterSeconds, failure, type AuthFailure } from './results.js'
import type { AuthRequest, AuthResult, CredentialLookup } from './types.js'

export interface WsseVerifyOptions {
  /** Accepted distance of Created from the gateway's clock, seconds (SPEC: 300). */
  windowSeconds: number
}

export interface UsernameToken {
  username: string
  passwordDigest: string
  nonce: string
  created: string
}

const fields = { username: 'Username', passworddigest: 'PasswordDigest', nonce: 'Nonce', created: 'Created' } as const
const maxHeaderLength = 4096
const dummyPassword = randomToken(24)

function malformed(message: string): AuthFailure {
  return failure('wsse', 400, 'malformed_credentials', message, 'malformed')
}

/**
 * Parses the X-WSSE value in one pass: `UsernameToken` then `Name="value"` pairs in any
 * order, separated by "," with optional white space. Returns the token or an error.
 */
export function parseUsernameToken(header: string): UsernameToken | string {
  if (header.length > maxHeaderLength) return 'The X-WSSE header is too long'
  const scheme = 'usernametoken'
  let i = 0
  const n = header.length
  while (i < n && header.charCodeAt(i) === 32) i++
  if (header.slice(i, i + scheme.length).toLowerCase() !== scheme) return 'X-WSSE must be a UsernameToken'
  i += scheme.length
  const found: Partial<Record<keyof typeof fields, string>> = {}
  for (;;) {
    while (i < n && (header.charCodeAt(i) === 32 || header.charCodeAt(i) === 9 || header.charCodeAt(i) === 44)) i++
    if (i >= n) break
    const eq = header.indexOf('=', i)
    if (eq === -1) return 'X-WSSE has a field without a value'
    const name = header.slice(i, eq).trim()
    if (header.charCodeAt(eq + 1) !== 34) return `X-WSSE field ${name} must be quoted`
    const close = header.indexOf('"', eq + 2)
    if (close === -1) return `X-WSSE field ${name} is not terminated`
    const key = name.toLowerCase() as keyof typeof fields
    if (Object.hasOwn(fields, key)) {
      if (found[key] !== undefined) return `X-WSSE field ${fields[key]} is repeated`
      found[key] = header.slice(eq + 2, close)
    }
    i = close + 1
    const c = header.charCodeAt(i)
    if (i < n && c !== 44 && c !== 32 && c !== 9) return 'X-WSSE fields must be separated by commas'
  }
  for (const key of Object.keys(fields) as Array<keyof typeof fields>) {
    if (!found[key]) return `X-WSSE requires ${fields[key]}`
  }
  return { username: found.username!, passwordDigest: found.passworddigest!, nonce: found.nonce!, created: found.created! }
}

/**
 * ISO 8601 date-time with a zone (`Z` or ±hh:mm / ±hhmm), optional fractional seconds:
 * milliseconds since the epoch, or NaN when it is not one.
 */
export function parseCreated(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?:(Z|z)|([+-])(\d{2}):?(\d{2}))$/.exec(s)
  if (m === null) return NaN
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return NaN
  const t = Date.UTC(year, month - 1, day, hour, minute, second)
  // Date.UTC rolls 31 February into March: reject days the month does not have.
  if (new Date(t).getUTCDate() !== day) return NaN
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3))
  let offset = 0
  if (m[9] !== undefined) {
    const oh = Number(m[10])
    const om = Number(m[11])
    if (oh > 23 || om > 59) return NaN
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000
  }
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

  // Both conventions are computed and compared every time, so neither the user's
  // existence nor the nonce style shows in the time taken. Header text is Latin-1 in
  // Node, so 'latin1' gives back the octets exactly as sent.
  const literalBytes = Buffer.from(token.nonce, 'latin1')
  const rawBytes = strictBase64(token.nonce)
  const base64Ok = safeEqual(token.passwordDigest, wsseDigest(rawBytes ?? literalBytes, token.created, password)) && rawBytes !== null
  const literalOk = safeEqual(token.passwordDigest, wsseDigest(literalBytes, token.created, password))

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
