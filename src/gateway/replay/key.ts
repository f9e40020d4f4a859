// Cache keys are hashed: the caller's key holds client-chosen text (user names, nonces) of
// any length, and a SHA-256 digest bounds every stored key to 43 characters.
import { hash } from 'node:crypto'

export function hashKey(key: string): string {
  return hash('sha256', key, 'base64url')
}

/** Redis EX and our own expiry take whole seconds, at least one. */
export function wholeSeconds(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) throw new RangeError(`ttlSeconds must be positive, got ${ttlSeconds}`)
  return Math.ceil(ttlSeconds)
}
