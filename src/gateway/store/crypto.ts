// Secrets at rest (docs/gateway.md#the-oauth-provider-and-the-account-pages). API passwords, consumer secrets and token secrets must come
// back in plain text (WSSE digests and OAuth HMAC keys are computed from them), so they
// are encrypted, not hashed: AES-256-GCM under a key derived from KIGO_SECRET_KEY. Login
// passwords are only ever compared, so they are hashed with scrypt (RFC 7914).
import { createCipheriv, createDecipheriv, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { deriveKey } from '../../common/secrets.js'

// ---- encryption ---------------------------------------------------------------------

/** A stored secret that does not decrypt: tampered, moved from another row, or a changed KIGO_SECRET_KEY. */
export class UnreadableSecret extends Error {
  override name = 'UnreadableSecret'
}

const sealVersion = 'v1'
const ivBytes = 12 // the GCM nonce size NIST SP 800-38D recommends
const tagBytes = 16

/**
 * Seals and opens secrets as one text value `v1.<iv>.<tag>.<ciphertext>` (base64url).
 * The version names the key derivation, so a later key or algorithm can sit beside it.
 * Every value is bound to where it is stored (the associated data, e.g.
 * `users.api_password:alice`): a ciphertext copied into another row fails to open.
 */
export class SecretBox {
  private readonly key: Buffer

  constructor(secretKey: string) {
    this.key = deriveKey(secretKey, 'secrets at rest v1')
  }

  seal(plain: string, associatedData: string): string {
    const iv = randomBytes(ivBytes)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: tagBytes })
    cipher.setAAD(Buffer.from(associatedData, 'utf8'))
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return [sealVersion, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.')
  }

  /**
   * The value sealed again under another binding (a replaced secret kept as the previous
   * one), or null when it does not open: a secret that was altered or sealed under another
   * key worked for nobody, so a rotation keeps none rather than failing.
   */
  reseal(sealed: string, fromAssociatedData: string, toAssociatedData: string): string | null {
    try {
      return this.seal(this.open(sealed, fromAssociatedData), toAssociatedData)
    } catch (err) {
      if (err instanceof UnreadableSecret) return null
      throw err
    }
  }

  /** The plain value; throws UnreadableSecret when the value was altered, moved or sealed under another key. */
  open(sealed: string, associatedData: string): string {
    const parts = sealed.split('.')
    if (parts.length !== 4 || parts[0] !== sealVersion) throw new UnreadableSecret(`unrecognized sealed value for ${associatedData}`)
    const iv = Buffer.from(parts[1]!, 'base64url')
    const tag = Buffer.from(parts[2]!, 'base64url')
    const ciphertext = Buffer.from(parts[3]!, 'base64url')
    if (iv.length !== ivBytes || tag.length !== tagBytes) throw new UnreadableSecret(`malformed sealed value for ${associatedData}`)
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: tagBytes })
      decipher.setAAD(Buffer.from(associatedData, 'utf8'))
      decipher.setAuthTag(tag)
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')
    } catch {
      throw new UnreadableSecret(
        `the stored secret for ${associatedData} does not decrypt (altered, moved from another row, or KIGO_SECRET_KEY changed)`,
      )
    }
  }
}

// ---- password hashing -----------------------------------------------------------------

export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  logN: number
  r: number
  p: number
}

/**
 * N = 2^15, r = 8, p = 1: 32 MiB and some tens of milliseconds per hash. That keeps a
 * login well under 100 ms while the same work is spent on every failed attempt (which
 * docs/operations.md#throttling throttles). The parameters are stored with each hash, so raising them later
 * changes new hashes only and old ones still verify.
 */
export const defaultScryptParams: ScryptParams = { logN: 15, r: 8, p: 1 }

const saltBytes = 16
const hashBytes = 32

function scryptAsync(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const N = 2 ** params.logN
  return new Promise((resolve, reject) => {
    scrypt(
      Buffer.from(password, 'utf8'),
      salt,
      hashBytes,
      // Node refuses N*r*128 above maxmem (32 MiB by default, exactly the need at 2^15).
      { N, r: params.r, p: params.p, maxmem: 256 * N * params.r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    )
  })
}

const b64 = (buf: Buffer): string => buf.toString('base64').replace(/=+$/, '')

/** A PHC-format string `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (standard base64, no padding). */
export async function hashPassword(password: string, params: ScryptParams = defaultScryptParams): Promise<string> {
  const salt = randomBytes(saltBytes)
  const hash = await scryptAsync(password, salt, params)
  return `$scrypt$ln=${params.logN},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`
}

const phcPattern = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/

/** Whether `password` matches `encoded`; the comparison takes constant time. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const m = phcPattern.exec(encoded)
  if (!m) throw new Error('unrecognized password hash format')
  const params = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }
  // Bounds keep a corrupted row from asking for gigabytes of memory.
  if (params.logN < 10 || params.logN > 20 || params.r < 1 || params.r > 32 || params.p < 1 || params.p > 16) {
    throw new Error('password hash parameters out of range')
  }
  const salt = Buffer.from(m[4]!, 'base64')
  const expected = Buffer.from(m[5]!, 'base64')
  const actual = await scryptAsync(password, salt, params)
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

let dummy: Promise<string> | undefined

/**
 * A hash of a random password with the default parameters, verified against when the
 * user is unknown so that an unknown id costs the same work as a known one (no user
 * enumeration by timing).
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(18).toString('base64url'))
  return dummy
}
