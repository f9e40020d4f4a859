// The core's memory of signed requests it has run (src/core/routes/identity-guard.ts):
// bounded, and a bound that never lets a replay through.
import { describe, expect, it } from 'vitest'
import { SeenRequestIds } from '../../src/core/routes/identity-guard.js'

describe('SeenRequestIds', () => {
  it('claims an ID once', () => {
    const seen = new SeenRequestIds(10)
    expect(seen.claim('a', 100)).toBe(true)
    expect(seen.claim('a', 100)).toBe(false)
    expect(seen.claim('b', 100)).toBe(true)
  })

  it('past its bound it forgets the oldest, and refuses whatever was signed no later than a forgotten ID', () => {
    const seen = new SeenRequestIds(3)
    for (const [id, t] of [['a', 100], ['b', 101], ['c', 102]] as const) expect(seen.claim(id, t)).toBe(true)
    // 'a' (signed at 100) is forgotten to make room for 'd'.
    expect(seen.claim('d', 103)).toBe(true)
    // 'a' again cannot be told from a first arrival any more: refused, as is anything signed at 100 or before.
    expect(seen.claim('a', 100)).toBe(false)
    expect(seen.claim('x', 99)).toBe(false)
    // Remembered ones are still refused, and later signatures accepted.
    expect(seen.claim('c', 102)).toBe(false)
    expect(seen.claim('e', 101)).toBe(true)
  })

  it('holds at most its bound whatever the number of claims', () => {
    const seen = new SeenRequestIds(1000)
    for (let i = 0; i < 50_000; i++) expect(seen.claim(`id-${i}`, 1000 + Math.floor(i / 100))).toBe(true)
    expect((seen as unknown as { seen: { size: number } }).seen.size).toBe(1000)
  })
})
