// A Set-Cookie header read as a browser reads it (RFC 6265 section 5.2): the name and value,
// then each attribute by its lower-case name (a flag is `true`), in any order.
export interface SetCookie {
  name: string
  value: string
  attributes: Record<string, string | true>
}

export function parseSetCookie(header: string): SetCookie {
  const [pair = '', ...rest] = header.split(';').map((s) => s.trim())
  const eq = pair.indexOf('=')
  const attributes: Record<string, string | true> = {}
  for (const a of rest) {
    const i = a.indexOf('=')
    if (i === -1) attributes[a.toLowerCase()] = true
    else attributes[a.slice(0, i).toLowerCase()] = a.slice(i + 1)
  }
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes }
}
