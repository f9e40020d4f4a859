// Entry and photo IDs are PostgreSQL bigints written as digit strings (docs/api.md#objects).
const maxBigint = 9223372036854775807n

/**
 * The canonical form of an ID given by a client, or null when it cannot name anything:
 * not all digits, or beyond the bigint range (which the store would refuse with an error).
 */
export function parseId(text: string): string | null {
  if (!/^[0-9]{1,25}$/.test(text)) return null
  // Most IDs are already canonical and far inside the range: no BigInt needed for them.
  if (text.length < 19 && text.charCodeAt(0) !== 0x30) return text
  const n = BigInt(text)
  if (n < 1n || n > maxBigint) return null
  return n.toString()
}

/** docs/operations.md#operator-command-line: user IDs. */
export const userIdPattern = /^[A-Za-z][A-Za-z0-9_-]{2,31}$/
