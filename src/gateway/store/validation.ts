// Input checks of the identity store: bad values are refused with InvalidInput (which
// the callers turn into a 400) rather than stored. Limits that no protocol fixes are
// chosen here and named.
import { scopes as allScopes, userIdPattern, type Scope } from '../domain/identifiers.js'

/** A value the store refuses to keep; `field` names the input, `message` says why. */
export class InvalidInput extends Error {
  override name = 'InvalidInput'
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message)
  }
}

/** For a store call's `.catch`: the InvalidInput it refused with, returned to be answered; anything else thrown on. */
export function refused(err: unknown): InvalidInput {
  if (err instanceof InvalidInput) return err
  throw err
}

export const limits = {
  /** Display names of users and applications. */
  nameLength: 100,
  /** Login and API passwords; bounds the work of hashing and of WSSE digests. */
  passwordLength: 1024,
  callbackUrlLength: 2048,
} as const

// C0 and C1 controls (and DEL): never part of a name, and PostgreSQL text cannot hold NUL.
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/
// With the `u` flag a well-formed surrogate pair is one code point, so this matches only
// lone surrogates, which UTF-8 cannot carry (they would come back as U+FFFD).
const loneSurrogate = /\p{Cs}/u

export function checkUserId(id: unknown): string {
  if (typeof id !== 'string' || !userIdPattern.test(id)) {
    throw new InvalidInput('id', 'user id must be 3 to 32 characters: a letter, then letters, digits, "_" or "-"')
  }
  return id
}

/**
 * Names the public pages or the gateway use as a first path segment (docs/api.md#pages): a user
 * with one of these IDs would have a page nobody can reach. Compared case-insensitively,
 * as user IDs are unique regardless of case. IDs with a dot are already refused by the
 * pattern.
 */
export const reservedUserIds: readonly string[] = [
  'api', 'oauth', 'account', 'admin', 'keyword', 'users', 'photos', 'applications', 'migration', 'healthz', 'readyz', 'auth',
]

export function isReservedUserId(id: string): boolean {
  return reservedUserIds.includes(id.toLowerCase())
}

/** A user ID for a new user: well-formed and not reserved (docs/api.md#pages). */
export function checkNewUserId(id: unknown): string {
  const checked = checkUserId(id)
  if (isReservedUserId(checked)) {
    throw new InvalidInput('id', `user id "${checked}" is reserved for the service's own pages (${reservedUserIds.join(', ')}); choose another`)
  }
  return checked
}

// Invisible format characters (Unicode category Cf: bidi overrides and isolates such as
// U+202E, zero-width spaces and joiners, the byte-order mark) and the line and paragraph
// separators. In a name shown on a consent page, an override can make one name read
// as another application's name. The one joiner allowed is U+200D between two pictographs
// (an emoji sequence such as a family).
const formatCharacter = /[\p{Cf}\u2028\u2029]/u
const emojiJoiner = /(?<=\p{Extended_Pictographic}\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu

/**
 * The names of users, applications, login sites and OpenID Connect clients: trimmed; 1 to
 * 100 characters; no control characters, invisible format characters or invalid Unicode.
 */
export function checkName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string') throw new InvalidInput(field, `${field} must be a string`)
  const trimmed = name.trim()
  if (trimmed === '') throw new InvalidInput(field, `${field} must not be empty`)
  if ([...trimmed].length > limits.nameLength) throw new InvalidInput(field, `${field} must be at most ${limits.nameLength} characters`)
  if (controlCharacter.test(trimmed) || loneSurrogate.test(trimmed)) {
    throw new InvalidInput(field, `${field} must not contain control characters or invalid Unicode`)
  }
  if (formatCharacter.test(trimmed.replace(emojiJoiner, ''))) {
    throw new InvalidInput(field, `${field} must not contain invisible formatting characters (such as right-to-left overrides or zero-width spaces)`)
  }
  return trimmed
}

/**
 * Any text of 1 to 1024 characters, kept exactly (no trimming: a password is what the
 * client sends). NUL and lone surrogates are refused: they cannot round-trip through
 * HTTP headers or UTF-8 unchanged.
 */
export function checkPassword(password: unknown, field = 'password'): string {
  if (typeof password !== 'string' || password === '') throw new InvalidInput(field, `${field} must not be empty`)
  if (password.length > limits.passwordLength) throw new InvalidInput(field, `${field} must be at most ${limits.passwordLength} characters`)
  if (password.includes('\u0000') || loneSurrogate.test(password)) {
    throw new InvalidInput(field, `${field} must not contain NUL or invalid Unicode`)
  }
  return password
}

/** At least one scope, each from docs/gateway.md#the-oauth-provider-and-the-account-pages's list; returned without duplicates in canonical order. */
export function checkScopes(value: unknown, field = 'scopes'): Scope[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidInput(field, `${field} must list at least one of ${allScopes.join(', ')}`)
  }
  for (const s of value) {
    if (!(allScopes as readonly unknown[]).includes(s)) {
      throw new InvalidInput(field, `unknown scope ${JSON.stringify(s)}; allowed: ${allScopes.join(', ')}`)
    }
  }
  return allScopes.filter((s) => value.includes(s))
}

/**
 * Why `requested` goes beyond the scopes an application registered ("not registered for
 * write_public (registered: read_public)"), or null when it does not. A request token or
 * an access token never carries more than its application registered (docs/gateway.md#the-oauth-provider-and-the-account-pages); the
 * provider, the operator API and the store all hold tokens to this one rule.
 */
export function scopesBeyondRegistration(requested: readonly Scope[], registered: readonly Scope[]): string | null {
  const beyond = [...new Set(requested.filter((s) => !registered.includes(s)))]
  return beyond.length === 0 ? null : `not registered for ${beyond.join(', ')} (registered: ${registered.join(', ')})`
}

/**
 * null, or an absolute http/https URL without credentials or fragment: the callback an
 * application registers, from the account area or the operator API (and the shape an
 * oauth_callback must have, src/gateway/oauth1/callback.ts).
 */
export function checkCallbackUrl(value: unknown): string | null {
  if (value === null || value === undefined) return null
  return checkWebUrl(value, 'callbackUrl', 'callback URL')
}

/**
 * null, or the page where people learn what an application or a login site is: the
 * consent pages link it, so it has a callback's shape (an absolute http/https URL
 * without credentials or fragment, at most 2048 characters).
 */
export function checkHomeUrl(value: unknown): string | null {
  if (value === null || value === undefined) return null
  return checkWebUrl(value, 'homeUrl', 'home page URL')
}

/**
 * The spellings of a URL that URL parsers read differently (rules of
 * docs/security.md#oauth-callbacks): refused wherever a URL is registered or given.
 */
/** The authority of a URL as written: between `//` and the next `/`, `?` or `#` (backslash too). */
function writtenAuthority(value: string): string {
  const start = value.indexOf('//')
  if (start === -1) return ''
  const rest = value.slice(start + 2)
  const end = rest.search(/[/?#\\]/)
  return end === -1 ? rest : rest.slice(0, end)
}

export type UrlAmbiguity = { reason: 'backslash' | 'control' | 'user_info' | 'encoded_control'; message: string }

/**
 * Why `value` is refused before it is parsed, or null: the spellings URL parsers disagree
 * on (also the rules of OpenID Connect redirect URIs, docs/oidc.md#registering-a-site).
 */
export function urlAmbiguity(value: string): UrlAmbiguity | null {
  if (value.includes('\\')) return { reason: 'backslash', message: 'it must not contain a backslash' }
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return { reason: 'control', message: 'it must not contain spaces, tabs, line breaks or other control characters' }
  const authority = writtenAuthority(value)
  if (/%5c/i.test(authority)) return { reason: 'backslash', message: 'it must not contain a backslash' }
  if (authority.includes('@') || /%40/i.test(authority)) return { reason: 'user_info', message: 'it must not carry user information (user@host)' }
  if (/%(?:[01][0-9a-f]|20|7f)/i.test(authority)) return { reason: 'encoded_control', message: 'its host must not contain encoded control characters' }
  return null
}

const ambiguousText: Record<UrlAmbiguity['reason'], string> = {
  backslash: 'must not contain a backslash',
  control: 'must not contain spaces, tabs, line breaks or other control characters',
  encoded_control: 'must not have percent-encoded control characters in its host',
  user_info: 'must not carry credentials',
}

/**
 * An absolute http/https URL as written, without credentials or fragment (not even an
 * empty one: `https://good.example/#`), and without a spelling parsers disagree on
 * (urlAmbiguity). The one rule for every URL a registration holds: an application's
 * callback and home page, a login site's, an OpenID Connect client's redirect URIs.
 * `label` names it in the messages.
 */
export function checkWebUrl(value: unknown, field: string, label: string, maxLength: number = limits.callbackUrlLength): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
    throw new InvalidInput(field, `${label} must be an absolute http or https URL of at most ${maxLength} characters`)
  }
  const ambiguous = urlAmbiguity(value)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    // `https://a%40b/` is no URL at all for WHATWG, but it was meant as user-info.
    throw new InvalidInput(field, `${label} ${ambiguous?.reason === 'user_info' ? ambiguousText.user_info : 'must be an absolute http or https URL'}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidInput(field, `${label} must use http or https`)
  if (ambiguous !== null && ambiguous.reason !== 'user_info') throw new InvalidInput(field, `${label} ${ambiguousText[ambiguous.reason]}`)
  if (ambiguous !== null || url.username !== '' || url.password !== '') throw new InvalidInput(field, `${label} ${ambiguousText.user_info}`)
  // WHATWG drops an empty fragment (`https://good.example/#` has hash ''), so the text is checked too.
  if (url.hash !== '' || value.includes('#')) throw new InvalidInput(field, `${label} must not have a fragment`)
  return value
}

/**
 * Whether a presented consumer key or token could be one this store generated
 * (base64url, bounded). Anything else cannot exist, so lookups answer "unknown" without
 * a database round trip, and no odd bytes ever reach the SQL engine.
 */
export function isPlausibleKey(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 16 && value.length <= 128 && /^[A-Za-z0-9_-]+$/.test(value)
}

/**
 * A contact address: one `local@domain` of at most 254 characters (RFC 5321 §4.5.3.1.3),
 * without white space or controls. Only ever shown to operators, never sent to.
 */
export function checkEmail(value: unknown, field = 'email'): string {
  if (typeof value !== 'string' || value.length > 254 || !/^[^\s@\x00-\x1f\x7f]+@[^\s@\x00-\x1f\x7f]+\.[^\s@\x00-\x1f\x7f]+$/.test(value)) {
    throw new InvalidInput(field, `${field} must be an e-mail address such as alice@example.com (at most 254 characters)`)
  }
  return value
}
