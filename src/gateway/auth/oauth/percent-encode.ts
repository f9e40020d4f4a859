// Percent-encoding and -decoding for OAuth 1.0a (RFC 5849 §3.6): UTF-8 first, then every
// octet outside the RFC 3986 unreserved set (ALPHA, DIGIT, "-", ".", "_", "~") becomes
// "%XX" with upper-case hex. This is on the hot path of every OAuth request, so it uses a
// lookup table and returns the input untouched when it is all unreserved (the usual case
// for keys, tokens, nonces and timestamps).

const UNRESERVED = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  if (/[A-Za-z0-9\-._~]/.test(ch)) UNRESERVED[c] = 1
}

/** "%00" … "%FF" by octet value. */
const ESCAPED: string[] = []
for (let b = 0; b < 256; b++) ESCAPED.push('%' + b.toString(16).toUpperCase().padStart(2, '0'))

/** RFC 5849 §3.6 encoding of a (decoded) string. */
export function percentEncode(s: string): string {
  const n = s.length
  let i = 0
  while (i < n) {
    const c = s.charCodeAt(i)
    if (c >= 128 || UNRESERVED[c] === 0) break
    i++
  }
  if (i === n) return s
  // Runs of unreserved characters are copied as slices, not character by character.
  let out = ''
  let run = 0
  for (; i < n; i++) {
    let c = s.charCodeAt(i)
    if (c < 128) {
      if (UNRESERVED[c] === 1) continue
      out += s.slice(run, i) + ESCAPED[c]!
    } else if (c < 0x800) {
      out += s.slice(run, i) + ESCAPED[0xc0 | (c >> 6)]! + ESCAPED[0x80 | (c & 0x3f)]!
    } else {
      const before = s.slice(run, i)
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < n ? s.charCodeAt(i + 1) : 0
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)
          out +=
            before +
            ESCAPED[0xf0 | (cp >> 18)]! +
            ESCAPED[0x80 | ((cp >> 12) & 0x3f)]! +
            ESCAPED[0x80 | ((cp >> 6) & 0x3f)]! +
            ESCAPED[0x80 | (cp & 0x3f)]!
          i++
          run = i + 1
          continue
        }
        // A lone surrogate has no UTF-8 form: encode U+FFFD, as TextEncoder would.
        c = 0xfffd
      }
      out += before + ESCAPED[0xe0 | (c >> 12)]! + ESCAPED[0x80 | ((c >> 6) & 0x3f)]! + ESCAPED[0x80 | (c & 0x3f)]!
    }
    run = i + 1
  }
  return run < n ? out + s.slice(run) : out
}

/**
 * Decodes one percent-encoded component as UTF-8. With `plusIsSpace` (form bodies and
 * query strings, RFC 5849 §3.4.1.3.1 via the HTML form encoding) "+" is a space; in the
 * Authorization header it is a literal "+" (§3.5.1 uses §3.6 encoding only).
 * Returns null for malformed escapes or octets that are not UTF-8.
 */
export function percentDecode(s: string, plusIsSpace: boolean): string | null {
  const hasPercent = s.indexOf('%') !== -1
  const hasPlus = plusIsSpace && s.indexOf('+') !== -1
  if (!hasPercent && !hasPlus) return s
  const t = hasPlus ? s.replaceAll('+', ' ') : s
  if (!hasPercent) return t
  try {
    return decodeURIComponent(t)
  } catch {
    return null
  }
}
