// The login API's query and signature (docs/login-api.md#signature): parameters as
// decoded from the URL, a name `amp;X` read as `X` first (a widely deployed client writes
// its query with `&amp;` separators), and `api_sig` the lower-case hex MD5 of the secret
// followed by every other parameter as name + value, sorted by name in byte order. Names
// and values are joined with no separator (the original protocol's), so `zz=ab` and
// `zza=b` sign alike: an empty name is refused, and the exchange takes its three
// parameters only (index.ts).
import { createHash } from 'node:crypto'
import { signedWithEither } from '../domain/secret-rotation.js'

export type LoginQuery = { ok: true; params: Array<[string, string]> } | { ok: false; message: string }

const maxQueryLength = 8192

/** The parameters of a raw query string (without `?`), or why it cannot be read. */
export function readLoginQuery(raw: string): LoginQuery {
  if (raw.length > maxQueryLength) return { ok: false, message: `The query is longer than ${maxQueryLength} characters.` }
  const params: Array<[string, string]> = []
  const seen = new Set<string>()
  for (const [rawName, value] of new URLSearchParams(raw)) {
    const name = rawName.startsWith('amp;') ? rawName.slice(4) : rawName
    // The signature joins names and values with no separator, so a parameter without a
    // name would be signed as its value alone, or (as the original did) not at all.
    if (name === '') return { ok: false, message: 'A parameter has no name (=value with nothing before the =).' }
    // One spelling of each parameter: two values (or `x` beside `amp;x`) would let the
    // signature cover one and the site or the check read the other.
    if (seen.has(name)) return { ok: false, message: `The parameter ${name} is given more than once.` }
    seen.add(name)
    params.push([name, value])
  }
  return { ok: true, params }
}

/** The signature of `params` (any `api_sig` among them left out) under `secret`. */
export function loginApiSignature(secret: string, params: ReadonlyArray<readonly [string, string]>): string {
  const sorted = params.filter(([n]) => n !== 'api_sig').sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))
  const md5 = createHash('md5').update(secret, 'utf8')
  for (const [n, v] of sorted) md5.update(n, 'utf8').update(v, 'utf8')
  return md5.digest('hex')
}

/**
 * Whether `given` is the signature of `params` under `secret` or, when given, under
 * `previousSecret` (the one a rotation replaced while it still works,
 * docs/login-api.md#rotating-the-secret); constant-time comparisons, both made.
 */
export function signatureMatches(secret: string, params: ReadonlyArray<readonly [string, string]>, given: string, previousSecret?: string): boolean {
  return signedWithEither(given, (s) => loginApiSignature(s, params), secret, previousSecret)
}
