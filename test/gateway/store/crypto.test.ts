import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SecretBox, UnreadableSecret, dummyPasswordHash, hashPassword, verifyPassword } from '../../../src/gateway/store/crypto.js'

const newKey = () => randomBytes(32).toString('base64')

describe('SecretBox', () => {
  const box = new SecretBox(newKey())

  it('opens what it sealed, for any text', () => {
    for (const plain of ['s3cret', 'pä$$wörd 🔑 日本語', 'x'.repeat(1024), '']) {
      const sealed = box.seal(plain, 'users.api_password:alice')
      expect(box.open(sealed, 'users.api_password:alice')).toBe(plain)
    }
  })

  it('stores one versioned base64url text value that does not contain the secret', () => {
    const sealed = box.seal('correct horse battery staple', 'row:1')
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain('correct horse')
  })

  it('uses a fresh IV each time: the same secret seals differently', () => {
    expect(box.seal('same', 'row:1')).not.toBe(box.seal('same', 'row:1'))
  })

  it('detects any change to the IV, tag or ciphertext', () => {
    const sealed = box.seal('a secret value', 'row:1')
    const parts = sealed.split('.')
    for (const i of [1, 2, 3]) {
      const bytes = Buffer.from(parts[i]!, 'base64url')
      bytes[0] = bytes[0]! ^ 1
      const tampered = parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join('.')
      expect(() => box.open(tampered, 'row:1')).toThrow(UnreadableSecret)
    }
  })

  it('refuses a value moved to another row (associated data differs)', () => {
    const sealed = box.seal('a secret value', 'users.api_password:alice')
    expect(() => box.open(sealed, 'users.api_password:bobby')).toThrow(UnreadableSecret)
  })

  it('refuses a value sealed under another master key', () => {
    const sealed = box.seal('a secret value', 'row:1')
    expect(() => new SecretBox(newKey()).open(sealed, 'row:1')).toThrow(UnreadableSecret)
  })

  it('refuses malformed and unknown-version values', () => {
    const sealed = box.seal('a secret value', 'row:1')
    for (const bad of ['', 'plain text', sealed.replace(/^v1/, 'v2'), sealed.split('.').slice(0, 3).join('.'), `${sealed}.x`]) {
      expect(() => box.open(bad, 'row:1')).toThrow(UnreadableSecret)
    }
  })
})

describe('password hashing', () => {
  it('verifies the right password and refuses others', async () => {
    const hash = await hashPassword('pä$$wörd 🔑')
    expect(await verifyPassword('pä$$wörd 🔑', hash)).toBe(true)
    expect(await verifyPassword('pä$$wörd', hash)).toBe(false)
    expect(await verifyPassword('', hash)).toBe(false)
  })

  it('encodes its parameters and a random salt, never the password', async () => {
    const a = await hashPassword('hunter22')
    const b = await hashPassword('hunter22')
    expect(a).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(a).not.toBe(b)
    expect(a).not.toContain('hunter22')
  })

  it('verifies hashes made with other parameters (they travel with the hash)', async () => {
    const hash = await hashPassword('hunter22', { logN: 14, r: 8, p: 1 })
    expect(hash).toContain('$ln=14,r=8,p=1$')
    expect(await verifyPassword('hunter22', hash)).toBe(true)
    expect(await verifyPassword('hunter23', hash)).toBe(false)
  })

  it('refuses a malformed stored hash or absurd parameters instead of guessing', async () => {
    await expect(verifyPassword('x', 'plain-password')).rejects.toThrow(/unrecognized/)
    const hash = await hashPassword('x')
    await expect(verifyPassword('x', hash.replace('ln=15', 'ln=30'))).rejects.toThrow(/out of range/)
  })

  it('offers a dummy hash that no ordinary password matches', async () => {
    const dummy = await dummyPasswordHash()
    expect(dummy).toBe(await dummyPasswordHash())
    expect(await verifyPassword('', dummy)).toBe(false)
    expect(await verifyPassword('password', dummy)).toBe(false)
  })
})
