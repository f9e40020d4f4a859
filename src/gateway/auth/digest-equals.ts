// Constant-time comparison of a computed digest with the one a client sent. A digest's
// length is fixed by its algorithm and public, so texts of another length are simply
// unequal, and equal-length texts are compared with timingSafeEqual directly: half the
// cost of safeEqual, which hashes both sides to hide the length of a stored secret.
// (Stored secrets themselves, such as passwords or PLAINTEXT keys, still use safeEqual.)
import { timingSafeEqual } from 'node:crypto'

export function digestEquals(expected: string, sent: string): boolean {
  if (sent.length !== expected.length) return false
  return timingSafeEqual(Buffer.from(expected, 'latin1'), Buffer.from(sent, 'latin1'))
}
