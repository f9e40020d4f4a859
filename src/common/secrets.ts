// Secrets: generated once into the data directory (mode 0600), derived per purpose with
// HKDF (RFC 5869), compared in constant time.
import { hash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
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
    adminToken: read('admin-token', () => randomBytes(24).toString('base64url')),
  }
}

/** A 32-byte key for one purpose, derived from the master key. */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'base64'), Buffer.alloc(0), `kigo ${purpose}`, 32))
}

/**
 * Constant-time equality for secrets of any length: both sides are hashed first, so the
 * comparison neither short-circuits nor leaks the length of the expected value.
 */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  // One-shot hashing (no Hash object): this runs on every Basic request.
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'))
}

/** A random token of `bytes` bytes, base64url (no padding). */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url')
}
