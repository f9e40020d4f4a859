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
import type { AuthRequest, AuthResult, CredentialLookup, CredentialVerifier } from '../domain/auth.js'

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

/** The four fields as the format names them, by their names in lower case. */
const fieldLabels = ['Username', 'PasswordDigest', 'Nonce', 'Created'] as const
const fieldOfName = new Map(fieldLabels.map((label, i) => [label.toLowerCase(), i]))

/** The scheme, after optional spaces, in any case. */
const schemePattern = /^ *usernametoken/i
/**
 * One field, read where the last one ended: separators ("," and white space), the name
 * (everything up to "="), "=", and the value in double quotes. Each part that is missing
 * matches empty, so that each mistake is named: no "=" (a name without a value), no
 * opening quote, no closing quote.
 */
const fieldPattern = /[ \t,]*([^=]*)(=?)("?)([^"]*)("?)/y
/** What may follow a value: a separator, or the end. */
const separatorOrEnd = /[ \t,]|$/y

/**
 * Parses the X-WSSE value: `UsernameToken` then `Name="value"` fields in any order,
 * separated by "," and white space; names in any case, other names ignored, each of the
 * four at most once and not empty. Returns the token or what is wrong with it.
 */
export function parseUsernameToken(header: string): UsernameToken | string {
  if (header.length > maxHeaderLength) return 'The X-WSSE header is too long'
  const scheme = schemePattern.exec(header)
  if (scheme === null) return 'X-WSSE must be a UsernameToken'
  const found: Array<string | undefined> = [undefined, undefined, undefined, undefined]
  fieldPattern.lastIndex = scheme[0].length
  for (;;) {
    const [, rawName, equals, open, value, close] = fieldPattern.exec(header)!
    // Nothing but separators was left.
    if (equals === '' && rawName === '') break
    const name = rawName!.trim()
    if (equals === '') return 'X-WSSE has a field without a value'
    if (open === '') return `X-WSSE field ${name} must be quoted`
    if (close === '') return `X-WSSE field ${name} is not terminated`
    const field = fieldOfName.get(name.toLowerCase())
    if (field !== undefined) {
      if (found[field] !== undefined) return `X-WSSE field ${fieldLabels[field]} is repeated`
      found[field] = value
    }
    separatorOrEnd.lastIndex = fieldPattern.lastIndex
    if (!separatorOrEnd.test(header)) return 'X-WSSE fields must be separated by commas'
  }
  const missing = found.findIndex((value) => !value)
  if (missing !== -1) return `X-WSSE requires ${fieldLabels[missing]}`
  return { username: found[0]!, passwordDigest: found[1]!, nonce: found[2]!, created: found[3]! }
}

/**
 * ISO 8601 date-time with a zone (`Z` or ±hh:mm / ±hhmm), optional fractional seconds
 * (1 to 9 digits, after "." or ","): its fields, checked for range below.
 */
const createdPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?:[Zz]|([+-])(\d{2}):?(\d{2}))$/

/** A Created date-time in milliseconds since the epoch, or NaN when it is not one (see createdPattern). */
export function parseCreated(s: string): number {
  const m = createdPattern.exec(s)
  if (m === null) return NaN
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return NaN
  const t = Date.UTC(year, month - 1, day, hour, minute, second)
  // Date.UTC rolls 31 February into March: reject days the month does not have.
  if (new Date(t).getUTCDate() !== day) return NaN
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'))
  if (m[8] === undefined) return t + ms
  const [offsetHours, offsetMinutes] = [Number(m[9]), Number(m[10])]
  if (offsetHours > 23 || offsetMinutes > 59) return NaN
  return t + ms - (m[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
}

/** Standard Base64 (padding optional), decoded; null when the text is not Base64. */
function strictBase64(s: string): Buffer | null {
  const unpadded = s.replace(/={1,2}$/, '')
  if (unpadded.length % 4 === 1 || !/^[A-Za-z0-9+/]+$/.test(unpadded)) return null
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

/** WSSE UsernameToken as a CredentialVerifier: X-WSSE read, the API password loaded through `lookup`, the nonce claimed in `replay`. */
export function wsseVerifier(lookup: CredentialLookup, replay: ReplayCache, opts: WsseVerifyOptions): CredentialVerifier {
  return {
    method: 'wsse',
    guessable: true,
    read(req) {
      const token = readWsse(req)
      if ('kind' in token) return token
      return { claimedUser: token.username, verify: () => verifyUsernameToken(token, req.now, lookup, replay, opts) }
    },
  }
}
