// Cache keys are hashed: the caller's key holds client-chosen text (user names, nonces) of
// any length, and a SHA-256 digest bounds every stored key. The in-process caches keep the
// digest as 43 characters of base64url (hashKey); Redis keeps its first 9 bytes raw
// (storedMember in redis.ts, docs/gateway.md#the-replay-cache), since every byte is paid
// for each of the millions of nonces a window holds.
import { hash } from 'node:crypto'

export function hashKey(key: string): string {
  return hash('sha256', key, 'base64url')
}

/** The SHA-256 digest of `key`, raw: what a claim stores in Redis is cut from it. */
export function keyDigest(key: string): Buffer {
  return hash('sha256', key, 'buffer')
}

/** Redis EX and our own expiry take whole seconds, at least one. */
export function wholeSeconds(ttlSeconds: number): number {
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) throw new RangeError(`ttlSeconds must be positive, got ${ttlSeconds}`)
  return Math.ceil(ttlSeconds)
}
