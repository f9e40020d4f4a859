// The pieces every secret rotation shares (src/gateway/domain/secret-rotation.ts): the
// overlaps one may choose, a stored previous secret opened only when it is read, whether it
// still works, and a signature checked against both secrets.
import { describe, expect, it } from 'vitest'
import { livePrevious, overlapOf, signedWithEither, storedPrevious } from '../../../src/gateway/domain/secret-rotation.js'

describe('storedPrevious', () => {
  it('is undefined for a row that keeps no previous secret', () => {
    const open = () => 'never'
    expect(storedPrevious(null, null, open)).toBeUndefined()
    expect(storedPrevious('sealed', null, open)).toBeUndefined()
    expect(storedPrevious(null, new Date(), open)).toBeUndefined()
  })

  it('opens the sealed secret only when it is read, and once', () => {
    const opened: string[] = []
    const previous = storedPrevious('sealed-old', '2027-01-01T00:00:00Z', (sealed) => {
      opened.push(sealed)
      return 'old secret'
    })!
    expect(previous.expiresAt).toBe(Date.parse('2027-01-01T00:00:00Z'))
    // An expired one is found out without decrypting it.
    expect(livePrevious(previous, Date.parse('2027-01-02T00:00:00Z'))).toBeNull()
    expect(opened).toEqual([])
    expect(livePrevious(previous, Date.parse('2026-12-31T00:00:00Z'))?.secret).toBe('old secret')
    expect(previous.secret).toBe('old secret')
    expect(opened).toEqual(['sealed-old'])
  })
})

describe('overlapOf', () => {
  it('takes the offered choices, as numbers or as a form posts them, and nothing else', () => {
    expect([0, 3600, 86_400, 604_800, '3600'].map(overlapOf)).toEqual([0, 3600, 86_400, 604_800, 3600])
    for (const bad of [1, -3600, 3600.5, '1h', ' 3600', '0x10', '', null, undefined, [3600]]) expect(overlapOf(bad), String(bad)).toBeNull()
  })
})

describe('signedWithEither', () => {
  const sign = (secret: string) => `sig(${secret})`
  it('accepts the signature of the secret or of the previous one, and refuses any other', () => {
    expect(signedWithEither('sig(new)', sign, 'new')).toBe(true)
    expect(signedWithEither('sig(old)', sign, 'new')).toBe(false)
    expect(signedWithEither('sig(old)', sign, 'new', 'old')).toBe(true)
    expect(signedWithEither('sig(new)', sign, 'new', 'old')).toBe(true)
    expect(signedWithEither('sig(other)', sign, 'new', 'old')).toBe(false)
  })
})
