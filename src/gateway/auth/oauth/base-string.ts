// The signature base string, exactly as RFC 5849 §3.4.1 defines it:
//   upper-case method & encode(base string URI) & encode(normalized parameters)
import { percentEncode } from './percent-encode.js'

/**
 * §3.4.1.2: scheme, lower-cased host with the scheme's default port dropped, and the path
 * as received (an empty path is "/"); the query is not part of it.
 * `url` is the request target (origin form, or absolute form from a proxy).
 */
export function baseStringUri(scheme: 'http' | 'https', host: string, url: string): string {
  let path = url
  if (path.charCodeAt(0) !== 47) {
    // Absolute form (`http://host/path?query`): keep only the path and query.
    const authority = path.indexOf('://')
    if (authority !== -1) {
      const slash = path.indexOf('/', authority + 3)
      const q = path.indexOf('?', authority + 3)
      const at = slash === -1 ? q : q === -1 ? slash : Math.min(slash, q)
      path = at === -1 ? '' : path.slice(at)
    }
  }
  const q = path.indexOf('?')
  if (q !== -1) path = path.slice(0, q)
  if (path === '' || path.charCodeAt(0) !== 47) path = '/' + path

  let h = host
  for (let i = 0; i < h.length; i++) {
    const c = h.charCodeAt(i)
    if (c >= 65 && c <= 90) {
      h = h.toLowerCase()
      break
    }
  }
  const defaultPort = scheme === 'https' ? ':443' : ':80'
  if (h.endsWith(defaultPort)) h = h.slice(0, h.length - defaultPort.length)
  return scheme + '://' + h + path
}

/**
 * §3.4.1.3.2: names and values encoded, sorted by encoded name then encoded value
 * (byte order; encoded strings are ASCII, so code-unit order is byte order); duplicates kept.
 */
function encodedInOrder(pairs: ReadonlyArray<readonly [string, string]>): Array<[string, string]> {
  const encoded = new Array<[string, string]>(pairs.length)
  for (let i = 0; i < pairs.length; i++) {
    const p = pairs[i]!
    encoded[i] = [percentEncode(p[0]), percentEncode(p[1])]
  }
  return encoded.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
}

/** §3.4.1.1: the base string from its three parts. */
export function signatureBaseString(method: string, uri: string, pairs: ReadonlyArray<readonly [string, string]>): string {
  const encoded = encodedInOrder(pairs)
  let out = percentEncode(method.toUpperCase()) + '&' + percentEncode(uri) + '&'
  // The normalized parameters are encoded a second time: an encoded name or value holds
  // only unreserved characters and "%", and the separators become %3D and %26.
  for (let i = 0; i < encoded.length; i++) {
    const [name, value] = encoded[i]!
    if (i > 0) out += '%26'
    out += (name.indexOf('%') === -1 ? name : name.replaceAll('%', '%25')) + '%3D'
    out += value.indexOf('%') === -1 ? value : value.replaceAll('%', '%25')
  }
  return out
}
