// Secrets: generated once into the data directory (mode 0600), derived per purpose with
// HKDF (RFC 5869), compared in constant time.
import { hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Reads the data directory's generated secrets, creating them on first use. */
export function dataDirSecrets(dataDir: string): { secretKey: string; adminToken: string } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const read = (name: string, make: () => string): string => {
    const path = join(dataDir, name)
    if (!existsSync(path)) {
      try {
        writeFileSync(path, make() + '\n', { mode: 0o600, flag: 'wx' })
      } catch (err) {
        // Another process created it first: use theirs.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      }
    }
    chmodSync(path, 0o600)
    return readFileSync(path, 'utf8').trim()
  }
  return {
    secretKey: read('secret-key', () => randomBytes(32).toString('base64')),
    adminToken: read('admin-token', () => randomToken(24)),
  }
}

/** A 32-byte key for one purpose, derived from the master key. */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'base64'), Buffer.alloc(0), `kigo ${purpose}`, 32))
}

/**
 * Constant-time equality of a given value with an expected secret, whatever their lengths.
 * When the lengths differ, the expected value is compared with itself, so either way the
 * work is one comparison over the expected value's length: neither a mismatch's position
 * nor the lengths change the time taken. (Hashing both sides first does the same at the
 * cost of two digests, measured at about 20 µs per Basic request in the running gateway.)
 */
export function safeEqual(given: string | Buffer, expected: string | Buffer): boolean {
  const a = typeof given === 'string' ? Buffer.from(given) : given
  const b = typeof expected === 'string' ? Buffer.from(expected) : expected
  const sameLength = a.length === b.length
  return timingSafeEqual(sameLength ? a : b, b) && sameLength
}

/**
 * A random token of `bytes` bytes, base64url (no padding), never starting with `-`: about
 * one value in 64 would, and a command line then reads it as an option (`kigo tokens
 * revoke -abc…`). Drawing again costs under 0.03 bits of the first character's six.
 */
export function randomToken(bytes = 24): string {
  for (;;) {
    const token = randomBytes(bytes).toString('base64url')
    if (!token.startsWith('-')) return token
  }
}
