// Strict decoding of `application/x-www-form-urlencoded` data, for query strings and
// bodies alike (WHATWG URL Standard §5.1, with every error an error): a `%` not followed
// by two hex digits, or bytes that are not UTF-8 (docs/api.md: strings are UTF-8), get 400
// instead of being guessed at.
import { errors } from '../../common/errors.js'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

function hex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x41 && c <= 0x46) return c - 0x37
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  return -1
}

function decodeComponent(bytes: Buffer, start: number, end: number): string {
  const out = Buffer.allocUnsafe(end - start)
  let n = 0
  for (let i = start; i < end; i++) {
    const c = bytes[i]!
    if (c === 0x2b) {
      out[n++] = 0x20
    } else if (c === 0x25) {
      const hi = i + 2 < end ? hex(bytes[i + 1]!) : -1
      const lo = hi === -1 ? -1 : hex(bytes[i + 2]!)
      if (lo === -1) throw errors.badRequest('bad_encoding', 'Malformed percent-encoding in the parameters')
      out[n++] = (hi << 4) | lo
      i += 2
    } else {
      out[n++] = c
    }
  }
  try {
    return utf8.decode(out.subarray(0, n))
  } catch {
    throw errors.badRequest('bad_encoding', 'Parameters must be UTF-8')
  }
}

/** Name and value pairs in order, duplicates kept. */
export function decodeForm(bytes: Buffer): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  let start = 0
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x26, start)
    if (end === -1) end = bytes.length
    if (end > start) {
      let eq = bytes.indexOf(0x3d, start)
      if (eq === -1 || eq > end) eq = end
      pairs.push([decodeComponent(bytes, start, eq), eq < end ? decodeComponent(bytes, eq + 1, end) : ''])
    }
    start = end + 1
  }
  return pairs
}

/** The query of a request target (`/path?query`), as bytes. */
export function queryBytes(url: string): Buffer {
  const q = url.indexOf('?')
  if (q === -1) return Buffer.alloc(0)
  const hash = url.indexOf('#', q)
  return Buffer.from(url.slice(q + 1, hash === -1 ? undefined : hash), 'utf8')
}
