// The local view over the shared throttle: clear verdicts are reused for a moment,
// failures recorded here take effect at once, blocks are kept until their window ends.
import { describe, expect, it } from 'vitest'
import { CachedFailureThrottle } from '../../../src/gateway/throttle/cached.js'
import { MemoryFailureThrottle } from '../../../src/gateway/throttle/memory.js'
import type { FailureThrottle } from '../../../src/gateway/throttle/types.js'

function counting(inner: FailureThrottle) {
  const calls = { check: 0 }
  const wrapped: FailureThrottle = {
    check: (keys) => { calls.check++; return inner.check(keys) },
    recordFailure: (keys) => inner.recordFailure(keys),
    reset: (keys) => inner.reset(keys),
    close: () => inner.close(),
  }
  return { wrapped, calls }
}

describe('CachedFailureThrottle', () => {
  it('asks the shared throttle once per key while the key stays clear', async () => {
    let now = 1_000_000
    const { wrapped, calls } = counting(new MemoryFailureThrottle({ maxFailures: 2, windowSeconds: 60 }))
    const t = new CachedFailureThrottle(wrapped, { clearMs: 1000, now: () => now })
    expect(await t.check(['user:a', 'ip:1'])).toBe(0)
    expect(await t.check(['user:a', 'ip:1'])).toBe(0)
    expect(calls.check).toBe(2)
    now += 1001
    expect(await t.check(['user:a', 'ip:1'])).toBe(0)
    expect(calls.check).toBe(4)
  })

  it('sees a failure recorded through it at once', async () => {
    const t = new CachedFailureThrottle(new MemoryFailureThrottle({ maxFailures: 2, windowSeconds: 60 }))
    expect(await t.check(['user:b'])).toBe(0)
    await t.recordFailure(['user:b'])
    await t.recordFailure(['user:b'])
    expect(await t.check(['user:b'])).toBeGreaterThan(0)
  })

  it('sees a block reached elsewhere once its clear verdict has aged', async () => {
    let now = 1_000_000
    const shared = new MemoryFailureThrottle({ maxFailures: 1, windowSeconds: 60 })
    const t = new CachedFailureThrottle(shared, { clearMs: 500, now: () => now })
    expect(await t.check(['user:c'])).toBe(0)
    await shared.recordFailure(['user:c']) // another gateway
    now += 501
    expect(await t.check(['user:c'])).toBeGreaterThan(0)
  })

  it('forgets a key on reset', async () => {
    const t = new CachedFailureThrottle(new MemoryFailureThrottle({ maxFailures: 1, windowSeconds: 60 }))
    await t.recordFailure(['user:d'])
    expect(await t.check(['user:d'])).toBeGreaterThan(0)
    await t.reset(['user:d'])
    expect(await t.check(['user:d'])).toBe(0)
  })

  it('peeks: the verdict when every key is in a fresh view, else undefined (then check must ask)', async () => {
    let now = 1_000_000
    const { wrapped, calls } = counting(new MemoryFailureThrottle({ maxFailures: 1, windowSeconds: 60 }))
    const t = new CachedFailureThrottle(wrapped, { clearMs: 1000, now: () => now })
    expect(t.peek(['user:e', 'ip:2'])).toBeUndefined()
    expect(await t.check(['user:e'])).toBe(0)
    // One key of the two unseen: not known here.
    expect(t.peek(['user:e', 'ip:2'])).toBeUndefined()
    expect(await t.check(['user:e', 'ip:2'])).toBe(0)
    expect(t.peek(['user:e', 'ip:2'])).toBe(0)
    // A failure recorded here drops the key from the view: the block is for check to find.
    await t.recordFailure(['ip:2'])
    expect(t.peek(['user:e', 'ip:2'])).toBeUndefined()
    expect(await t.check(['ip:2'])).toBeGreaterThan(0)
    expect(t.peek(['ip:2'])).toBeGreaterThan(0)
    now += 1001
    expect(t.peek(['user:e'])).toBeUndefined()
    // Peeking never asked the shared throttle: only the three checks did.
    expect(calls.check).toBe(3)
  })
})
