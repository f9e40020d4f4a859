// Signature problems that explain themselves (OAuth Problem Reporting's
// oauth_problem_advice). When a signature fails with known secrets, the gateway says what
// it signed — method, base string URI, the parameter names in the order used — and tries
// the mistakes client developers make most often, each by recomputing the signature the
// way that mistake would have made it: a match names the mistake. Runs only on the
// failure path (a valid signature costs nothing more) and never puts a secret in the
// answer: the base string holds no secret (oauth_signature is not part of it, §3.4.1.3.1).
import { isFormContentType } from '../../../common/formats.js'
import { baseStringUri, signatureBaseString } from './base-string.js'
import { percentDecode, percentEncode } from './percent-encode.js'
import { computeSignature, type SignatureMethod } from './signature.js'
import { safeEqual } from '../../../common/secrets.js'
import type { AuthRequest } from '../../domain/auth.js'
import type { OAuthParameters } from './parameters.js'

export interface SignatureAdviceOptions {
  /** The deployments' public host names (`host[:port]`), tried as the host a client signed. */
  hosts: readonly string[]
  /** Also send the whole base string in a response header (embedded mode's default). */
  exposeBaseString: boolean
}

export interface SignatureAdvice {
  /** The oauth_problem_advice text: the mistake(s) recognised, then what the server signed. */
  advice: string
  /** Names of the recognised mistakes (stable, for tests and logs). */
  mistakes: string[]
  /** The whole base string, when the options allow it. */
  baseString?: string
}

/** The response header that carries the base string (when enabled). */
export const baseStringHeader = 'x-oauth-signature-base-string'

/** Largest JSON or multipart body read to check whether its fields were signed. */
export const adviceBodyLimit = 256 * 1024

interface Attempt {
  mistake: string
  text: string
  scheme: 'http' | 'https'
  host: string
  pairs: ReadonlyArray<readonly [string, string]>
  tokenSecret?: string
}

/** Query pairs of the request target, decoded the way the verifier decodes them. */
function queryPairs(url: string): Array<[string, string]> {
  const q = url.indexOf('?')
  if (q === -1) return []
  const out: Array<[string, string]> = []
  for (const part of url.slice(q + 1).split('&')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    const name = percentDecode(eq === -1 ? part : part.slice(0, eq), true)
    const value = eq === -1 ? '' : percentDecode(part.slice(eq + 1), true)
    if (name !== null && value !== null) out.push([name, value])
  }
  return out
}

/** `pairs` with each of `remove` taken out once (a multiset difference). */
function without(pairs: ReadonlyArray<readonly [string, string]>, remove: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
  const left = [...remove]
  const out: Array<[string, string]> = []
  for (const [n, v] of pairs) {
    const i = left.findIndex(([rn, rv]) => rn === n && rv === v)
    if (i === -1) out.push([n, v])
    else left.splice(i, 1)
  }
  return out
}

function hostWithoutPort(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']')
    return end === -1 ? host : host.slice(0, end + 1)
  }
  const colon = host.lastIndexOf(':')
  return colon === -1 ? host : host.slice(0, colon)
}

/** The kind of a body whose fields are never signed (RFC 5849 §3.4.1.3.1), or null. */
export function unsignedBodyKind(contentType: string | undefined): 'JSON' | 'multipart' | null {
  if (contentType === undefined) return null
  const t = contentType.toLowerCase()
  if (/^application\/([a-z0-9.+-]*\+)?json\b/.test(t)) return 'JSON'
  if (t.startsWith('multipart/form-data')) return 'multipart'
  return null
}

/**
 * The fields a client might have signed by mistake: a JSON object's top-level values
 * (strings, numbers, booleans), or a multipart body's text fields. Empty when the body
 * is neither, is too large or cannot be read.
 */
export function bodyFields(kind: 'JSON' | 'multipart', contentType: string, body: Buffer): Array<[string, string]> {
  if (kind === 'JSON') {
    try {
      const value: unknown = JSON.parse(body.toString('utf8'))
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return []
      const out: Array<[string, string]> = []
      for (const [k, v] of Object.entries(value)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.push([k, String(v)])
      }
      return out
    } catch {
      return []
    }
  }
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const boundary = m?.[1] ?? m?.[2]
  if (!boundary) return []
  const text = body.toString('latin1')
  const out: Array<[string, string]> = []
  for (const part of text.split(`--${boundary}`)) {
    const headerEnd = part.indexOf('\r\n\r\n')
    if (headerEnd === -1) continue
    const headers = part.slice(0, headerEnd)
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? ''
    if (/filename=/i.test(disposition)) continue
    const name = /name="([^"]*)"/i.exec(disposition)?.[1]
    if (name === undefined) continue
    let value = part.slice(headerEnd + 4)
    if (value.endsWith('\r\n')) value = value.slice(0, -2)
    out.push([Buffer.from(name, 'latin1').toString('utf8'), Buffer.from(value, 'latin1').toString('utf8')])
  }
  return out
}

/**
 * Explains a signature that did not verify with the right secrets. `bodyFieldsSigned`
 * are the fields of a JSON or multipart body, when the caller could read them.
 */
export function adviseOnSignature(
  req: AuthRequest,
  params: OAuthParameters,
  consumerSecret: string,
  tokenSecret: string,
  opts: SignatureAdviceOptions,
  bodyFieldsSigned: ReadonlyArray<readonly [string, string]> = [],
): SignatureAdvice {
  const method = params.protocol.get('oauth_signature_method') as SignatureMethod
  const sent = params.protocol.get('oauth_signature') ?? ''
  const uri = baseStringUri(req.scheme, req.host, req.url)
  const ordered = [...params.signed].map(([n, v]) => [percentEncode(n), percentEncode(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
  const names = ordered.map(([n]) => n)
  const signedText = `The server signed ${req.method.toUpperCase()} ${uri} with the parameters ${names.join(', ')} (in this order), with the key consumer secret & token secret (RFC 5849 §3.4).`

  const mistakes: string[] = []
  const found: string[] = []
  if (method === 'HMAC-SHA1' || method === 'HMAC-SHA256') {
    const attempts: Attempt[] = []
    const otherScheme = req.scheme === 'https' ? 'http' : 'https'
    attempts.push({ mistake: 'wrong_scheme', scheme: otherScheme, host: req.host, pairs: params.signed, text: `You signed ${otherScheme}:// but the request arrived as ${req.scheme}://: sign the scheme the server is reached by.` })
    const hosts = new Set<string>([...opts.hosts.map((h) => h.toLowerCase()), hostWithoutPort(req.host)])
    if (!req.host.includes(':')) hosts.add(`${req.host}:${req.scheme === 'https' ? 443 : 80}`)
    hosts.delete(req.host)
    for (const host of hosts) {
      const samePlace = hostWithoutPort(host) === hostWithoutPort(req.host)
      const mistake = samePlace ? 'wrong_port' : 'wrong_host'
      const text = samePlace
        ? `You signed the host as ${host} but sent the request to ${req.host}: sign the port exactly as in the URL you send to (and leave out only the scheme's default port).`
        : `You signed the host ${host} but sent the request to ${req.host}: sign the URL you actually send to.`
      for (const scheme of [req.scheme, otherScheme] as const) {
        attempts.push({ mistake, scheme, host, pairs: params.signed, text: scheme === req.scheme ? text : `${text} The scheme differs too (${scheme}://).` })
      }
    }
    const query = queryPairs(req.url)
    if (query.length > 0) {
      attempts.push({ mistake: 'query_left_out', scheme: req.scheme, host: req.host, pairs: without(params.signed, query), text: `You left the query parameters (${[...new Set(query.map(([n]) => n))].join(', ')}) out of the signature: they are signed like the others (RFC 5849 §3.4.1.3.1).` })
    }
    if (bodyFieldsSigned.length > 0) {
      const kind = unsignedBodyKind(req.contentType) ?? 'non-form'
      attempts.push({ mistake: 'body_parameters_signed', scheme: req.scheme, host: req.host, pairs: [...params.signed, ...bodyFieldsSigned], text: `You signed the fields of the ${kind} body (${bodyFieldsSigned.map(([n]) => n).join(', ')}): only an application/x-www-form-urlencoded body is signed; sign the query and the oauth_ parameters alone.` })
    }
    attempts.push({ mistake: 'double_encoding', scheme: req.scheme, host: req.host, pairs: params.signed.map(([n, v]) => [n, percentEncode(v)] as const), text: 'You percent-encoded the parameter values twice: encode each name and value once before sorting, and the joined string once more in the base string (RFC 5849 §3.4.1.3.2).' })
    if (tokenSecret !== '') {
      attempts.push({ mistake: 'token_secret_left_out', scheme: req.scheme, host: req.host, pairs: params.signed, tokenSecret: '', text: 'You signed with the consumer secret alone: the key is consumer secret & token secret (RFC 5849 §3.4.2).' })
    }
    for (const a of attempts) {
      if (mistakes.includes(a.mistake)) continue
      const base = signatureBaseString(req.method, baseStringUri(a.scheme, a.host, req.url), a.pairs)
      if (safeEqual(sent, computeSignature(method, base, consumerSecret, a.tokenSecret ?? tokenSecret))) {
        mistakes.push(a.mistake)
        found.push(a.text)
      }
    }
  }
  const kind = unsignedBodyKind(req.contentType)
  if (mistakes.length === 0 && kind !== null && !isFormContentType(req.contentType)) {
    found.push(`The ${kind} body is not signed: only the query and the oauth_ parameters are.`)
  }
  const advice = [...found, signedText].join(' ')
  const base = method === 'PLAINTEXT' ? undefined : signatureBaseString(req.method, uri, params.signed)
  return { advice, mistakes, ...(opts.exposeBaseString && base !== undefined ? { baseString: base } : {}) }
}
