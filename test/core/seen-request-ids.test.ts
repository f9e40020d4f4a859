// The core's memory of signed requests it has run (src/core/routes/identity-guard.ts):
// each claimed once, and a bounded memory.
import { describe, expect, it } from 'vitest'
import { SeenRequestIds } from '../../src/core/routes/identity-guard.js'

describe('SeenRequestIds', () => {
  it('claims an ID once', () => {
    const seen = new SeenRequestIds(10)
    expect(seen.claim('a')).toBe(true)
    expect(seen.claim('a')).toBe(false)
    expect(seen.claim('b')).toBe(true)
  })

  it('past its bound it forgets the least recently claimed first, and remembers the rest', () => {
    const seen = new SeenRequestIds(3)
    for (const id of ['a', 'b', 'c', 'd']) expect(seen.claim(id)).toBe(true)
    for (const id of ['b', 'c', 'd']) expect(seen.claim(id)).toBe(false)
    // 'a' was forgotten to make room for 'd'.
    expect(seen.claim('a')).toBe(true)
  })

  it('holds at most its bound whatever the number of claims', () => {
    const seen = new SeenRequestIds(1000)
    for (let i = 0; i < 50_000; i++) expect(seen.claim(`id-${i}`)).toBe(true)
    expect((seen as unknown as { seen: { size: number } }).seen.size).toBe(1000)
  })
})
