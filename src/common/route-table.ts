// The one route table of the public API (docs/api.md, docs/gateway.md#which-credentials-each-operation-accepts), imported by both apps: the
// gateway matches it to decide which operation a request is and what it needs; the core
// registers its routes from it, and checks that the operation it routed is the one the
// gateway signed. One table, so the two can never disagree about what a path means.
//
// Paths are written with `{name}` for a path parameter (one whole segment). An
// operation's last segment takes an optional format extension: `.json` or `.xml` after a
// fixed segment (nothing else matches), any `.ext` after a parameter (the core answers an
// unknown extension with 404, as docs/api.md asks).
import type { AuthMethod } from './identity.js'

/** OAuth scopes (docs/gateway.md#the-oauth-provider-and-the-account-pages). */
export const scopes = ['read_public', 'write_public', 'read_private', 'write_private'] as const
export type Scope = (typeof scopes)[number]

export interface Operation {
  /** Stable name: the metrics label, the key of `auth.routeMethods`, signed into the identity. */
  name: string
  /** The method the operation is documented with. */
  method: 'GET' | 'POST'
  /**
   * A read that answers POST exactly as GET (docs/api-differences.md#post-reads): the same
   * operation, the same authentication, parameters from the body too. Never set on a write.
   */
  readByPost?: true
  /**
   * For a form of "the authenticated user" (no `/{id}`): the operation it runs instead when a
   * non-empty `id` parameter names the user (docs/api-differences.md#id-parameter), so
   * `user_timeline.json?id=bob` is the anonymous-allowed read of bob's timeline.
   */
  byId?: string
  /** `/api/statuses/show/{eid}`; see the header for extensions. */
  path: string
  /** Anonymous requests pass (credentials that are present are still verified). */
  anonymous: boolean
  /** Credential kinds accepted. */
  methods: AuthMethod[]
  /** An OAuth token must hold at least one of these; empty: any scope. */
  scopes: Scope[]
}

const all: AuthMethod[] = ['oauth', 'basic', 'wsse']
/** Writes: OAuth needs write_public (docs/gateway.md#which-credentials-each-operation-accepts). */
const write = { anonymous: false, methods: all, scopes: ['write_public'] as Scope[] }
/** Reads: anonymous, or any credential (OAuth read_public or write_public). */
const read = { anonymous: true, methods: all, scopes: ['read_public', 'write_public'] as Scope[], readByPost: true as const }
/**
 * Reads of "the authenticated user" (the forms without `/{id}`, docs/api.md#timelines, docs/api.md#users-and-follows, docs/api.md#keywords, docs/gateway.md#which-credentials-each-operation-accepts):
 * credentials needed. OAuth `read_public`, or `write_public`, which every client that may
 * write as the user is also trusted to read with (as statuses/show allows).
 */
const readSelf = { anonymous: false, methods: all, scopes: ['read_public', 'write_public'] as Scope[], readByPost: true as const }

export const operations: readonly Operation[] = [
  { name: 'statuses/update', method: 'POST', path: '/api/statuses/update', ...write },
  { name: 'statuses/show', method: 'GET', path: '/api/statuses/show/{eid}', ...read },
  { name: 'statuses/destroy', method: 'POST', path: '/api/statuses/destroy/{eid}', ...write },
  { name: 'favorites/create', method: 'POST', path: '/api/favorites/create/{eid}', ...write },
  { name: 'favorites/destroy', method: 'POST', path: '/api/favorites/destroy/{eid}', ...write },
  // docs/api.md#timelines timelines. A form with `{word}` or `{id}` is its own row: one path per row.
  { name: 'statuses/public_timeline', method: 'GET', path: '/api/statuses/public_timeline', ...read },
  { name: 'statuses/keyword_timeline', method: 'GET', path: '/api/statuses/keyword_timeline', ...read },
  { name: 'statuses/keyword_timeline/{word}', method: 'GET', path: '/api/statuses/keyword_timeline/{word}', ...read },
  { name: 'statuses/user_timeline', method: 'GET', path: '/api/statuses/user_timeline', ...readSelf, byId: 'statuses/user_timeline/{id}' },
  { name: 'statuses/user_timeline/{id}', method: 'GET', path: '/api/statuses/user_timeline/{id}', ...read },
  { name: 'statuses/friends_timeline', method: 'GET', path: '/api/statuses/friends_timeline', ...readSelf, byId: 'statuses/friends_timeline/{id}' },
  { name: 'statuses/friends_timeline/{id}', method: 'GET', path: '/api/statuses/friends_timeline/{id}', ...read },
  { name: 'statuses/album', method: 'GET', path: '/api/statuses/album', ...read },
  { name: 'statuses/album/{word}', method: 'GET', path: '/api/statuses/album/{word}', ...read },
  // docs/api.md#users-and-follows users and follows.
  { name: 'friendships/show', method: 'GET', path: '/api/friendships/show', ...readSelf, byId: 'friendships/show/{id}' },
  { name: 'friendships/show/{id}', method: 'GET', path: '/api/friendships/show/{id}', ...read },
  { name: 'statuses/friends', method: 'GET', path: '/api/statuses/friends', ...readSelf, byId: 'statuses/friends/{id}' },
  { name: 'statuses/friends/{id}', method: 'GET', path: '/api/statuses/friends/{id}', ...read },
  { name: 'statuses/followers', method: 'GET', path: '/api/statuses/followers', ...readSelf, byId: 'statuses/followers/{id}' },
  { name: 'statuses/followers/{id}', method: 'GET', path: '/api/statuses/followers/{id}', ...read },
  { name: 'friendships/create', method: 'POST', path: '/api/friendships/create/{id}', ...write },
  { name: 'friendships/destroy', method: 'POST', path: '/api/friendships/destroy/{id}', ...write },
  // docs/api.md#keywords keywords.
  { name: 'keywords/show', method: 'GET', path: '/api/keywords/show', ...read },
  { name: 'keywords/show/{word}', method: 'GET', path: '/api/keywords/show/{word}', ...read },
  { name: 'keywords/hot', method: 'GET', path: '/api/keywords/hot', ...read },
  { name: 'keywords/list', method: 'GET', path: '/api/keywords/list', ...read },
  { name: 'statuses/keywords', method: 'GET', path: '/api/statuses/keywords', ...readSelf, byId: 'statuses/keywords/{id}' },
  { name: 'statuses/keywords/{id}', method: 'GET', path: '/api/statuses/keywords/{id}', ...read },
  { name: 'keywords/create', method: 'POST', path: '/api/keywords/create', ...write },
  { name: 'keywords/create/{word}', method: 'POST', path: '/api/keywords/create/{word}', ...write },
  { name: 'keywords/destroy', method: 'POST', path: '/api/keywords/destroy', ...write },
  { name: 'keywords/destroy/{word}', method: 'POST', path: '/api/keywords/destroy/{word}', ...write },
  { name: 'keywords/relation/create', method: 'POST', path: '/api/keywords/relation/create', ...write },
  { name: 'keywords/relation/destroy', method: 'POST', path: '/api/keywords/relation/destroy', ...write },
  { name: 'photos/create', method: 'POST', path: '/api/photos/create', anonymous: false, methods: all, scopes: ['write_private'] },
  { name: 'applications/my', method: 'GET', path: '/applications/my', anonymous: false, methods: ['oauth'], scopes: [] },
]

export const operationNames: readonly string[] = operations.map((o) => o.name)

/** The table with a deployment's narrower credential kinds per operation (config `auth.routeMethods`). */
export function withRouteMethods(overrides: Record<string, AuthMethod[]>): Operation[] {
  return operations.map((o) => (overrides[o.name] ? { ...o, methods: overrides[o.name]! } : o))
}

// ---- matching

const segmentChars = '[^/]+'

function compile(path: string): RegExp {
  const segments = path.split('/').slice(1)
  const body = segments
    .map((s, i) => {
      if (/^\{[a-z_]+\}$/.test(s)) return segmentChars
      const literal = s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      // A fixed last segment takes the format extension; an empty one is a trailing slash.
      return i === segments.length - 1 && s !== '' ? `${literal}(?:\\.json|\\.xml)?` : literal
    })
    .join('/')
  return new RegExp(`^/${body}$`)
}

export interface RouteMatch {
  /** The operation of this method and path; null when the path names one only for other methods. */
  operation: Operation | null
  /** The methods the path accepts (for 405 and `Allow`). */
  allow: string[]
}

export type OperationMatcher = (method: string, canonicalPath: string) => RouteMatch | null

/**
 * A matcher over `table`: null when no operation has this path; otherwise the operation of
 * this method (HEAD counts as GET), or the methods the path does accept.
 */
export function operationMatcher(table: readonly Operation[]): OperationMatcher {
  // Fixed segments before parameters at the first place two paths differ, as the core's
  // router (find-my-way) prefers them: both sides then pick the same operation.
  const compiled = [...table].sort((a, b) => specificity(a.path, b.path)).map((o) => ({ o, re: compile(o.path) }))
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method
    let allow: string[] | null = null
    for (const { o, re } of compiled) {
      if (!re.test(path)) continue
      if (o.method === m || (m === 'POST' && o.readByPost === true)) return { operation: o, allow: allowOf(o) }
      allow = [...(allow ?? []), ...allowOf(o)]
    }
    return allow && { operation: null, allow }
  }
}

function specificity(a: string, b: string): number {
  const sa = a.split('/')
  const sb = b.split('/')
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = sa[i]!.startsWith('{')
    const pb = sb[i]!.startsWith('{')
    if (pa !== pb) return pa ? 1 : -1
  }
  return 0
}

// ---- the `id` parameter (docs/api-differences.md#id-parameter)

/**
 * Whether form-encoded text (a query, or an urlencoded body) holds a non-empty `id`. Names
 * are decoded (`%69d` is `id`; one that does not decode is not `id`); a value is judged
 * as sent, since no encoding of a non-empty value decodes to nothing. One function for
 * the gateway and the core, so that both choose the same operation.
 */
export function namesId(form: string): boolean {
  for (let start = 0; start < form.length; ) {
    let end = form.indexOf('&', start)
    if (end === -1) end = form.length
    let eq = form.indexOf('=', start)
    if (eq === -1 || eq > end) eq = end
    if (eq < end - 1 && isIdName(form.slice(start, eq))) return true
    start = end + 1
  }
  return false
}

function isIdName(raw: string): boolean {
  if (raw === 'id') return true
  if (raw.length < 4 || !raw.includes('%')) return false
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')) === 'id'
  } catch {
    return false
  }
}

/**
 * The operation a request runs once its parameters are known: a form of "the
 * authenticated user" whose query or urlencoded body names a non-empty `id` (`namesId`)
 * runs its `/{id}` form (`byId`), looked up in `table`; every other operation is itself.
 */
export function withIdParameter(table: readonly Operation[], o: Operation, namesAnId: () => boolean): Operation {
  if (o.byId === undefined || !namesAnId()) return o
  const byId = table.find((op) => op.name === o.byId)
  if (!byId) throw new Error(`No operation ${o.byId} in the route table`)
  return byId
}

/** The HTTP methods an operation answers (for 405 and `Allow`). */
export function allowOf(o: Operation): string[] {
  return o.method === 'GET' ? (o.readByPost ? ['GET', 'HEAD', 'POST'] : ['GET', 'HEAD']) : ['POST']
}

/** The Fastify URLs an operation is registered under in the core. */
export function fastifyUrls(o: Operation): string[] {
  const url = o.path.replace(/\{([a-z_]+)\}/g, ':$1')
  const lastIsParam = /\}$/.test(o.path)
  return lastIsParam ? [url] : [url, `${url}.json`, `${url}.xml`]
}

// ---- the canonical path (one form, computed once at the gateway, checked again at the core)

const unreserved = /[A-Za-z0-9\-._~]/

/**
 * True when position `i` of `raw` lies in the one segment of a keyword page's path,
 * `/keyword/{word}`: a keyword may hold a `/` (`a/b`), which its page's path can only
 * carry encoded, and it is kept encoded (`%2F`) in the canonical path. Nowhere else, and
 * never under /api/: every router still splits every other path on the same slashes.
 */
function inKeywordWord(raw: string, i: number): boolean {
  return i >= 9 && raw.startsWith('/keyword/') && raw.indexOf('/', 9) === -1
}

export type CanonicalPath = { ok: true; path: string } | { ok: false; reason: string }

/**
 * The canonical form of a request path (no query): percent-encodings of unreserved
 * characters (RFC 3986 §2.3) decoded, every other encoding kept, hex digits upper-cased
 * (§6.2.2.1). Refused, because two parsers may read them differently: anything that is not
 * origin-form (absolute-form targets, RFC 9112 §3.2), bytes outside printable ASCII,
 * malformed percent-encoding, encoded `/` `\` `%` `?` `#` `;` `NUL`, a raw `\` `;` `#`, an
 * empty segment (`//`), and `.` or `..` segments (RFC 3986 §5.2.4), however spelled.
 */
export function canonicalPath(raw: string): CanonicalPath {
  // (One exception to the encoded `/`: see inKeywordWord.)
  if (!raw.startsWith('/')) return { ok: false, reason: 'The request target must be a path (origin-form)' }
  // Runs on every request at both apps: the path is copied only from its first `%` on.
  let out = ''
  let copied = 0
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c <= 0x20 || c >= 0x7f) return { ok: false, reason: 'The path must be printable ASCII; percent-encode other characters' }
    if (c === 0x5c || c === 0x3b || c === 0x23) return { ok: false, reason: `The path must not contain "${raw[i]!}"` }
    if (c !== 0x25) continue
    const hex = raw.slice(i + 1, i + 3)
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return { ok: false, reason: 'The path is not validly percent-encoded' }
    const decoded = String.fromCharCode(parseInt(hex, 16))
    if ('/\\%?#;\0'.includes(decoded) && !(decoded === '/' && inKeywordWord(raw, i))) {
      return { ok: false, reason: `The path must not contain an encoded "${decoded === '\0' ? 'NUL' : decoded}"` }
    }
    out += raw.slice(copied, i) + (unreserved.test(decoded) ? decoded : `%${hex.toUpperCase()}`)
    i += 2
    copied = i + 1
  }
  out = copied === 0 ? raw : out + raw.slice(copied)
  // The segments after the leading `/`, in order.
  for (let start = 1; ; ) {
    const slash = out.indexOf('/', start)
    const end = slash === -1 ? out.length : slash
    if ((end - start === 1 && out[start] === '.') || (end - start === 2 && out.startsWith('..', start))) {
      return { ok: false, reason: 'The path must not contain "." or ".." segments' }
    }
    // An empty segment is `//`; only the last may be empty (a trailing slash).
    if (end === start && slash !== -1) return { ok: false, reason: 'The path must not contain "//"' }
    if (slash === -1) break
    start = slash + 1
  }
  return { ok: true, path: out }
}

const defaultMatcher = operationMatcher(operations)

/**
 * The name of the operation `method` and `url` (path and query, canonical) run, or ''
 * when none: what the gateway signs into the identity, and the core compares.
 */
export function operationNameOf(method: string, url: string): string {
  const q = url.indexOf('?')
  return defaultMatcher(method, q === -1 ? url : url.slice(0, q))?.operation?.name ?? ''
}
