// The local view over the shared throttle: clear verdicts are reused for a moment,
// failures recorded here take effect at once, blocks are kept until their window ends.
import { describe, expect, it } from 'vitest'
import { KnownPairs, RuleAttemptThrottle } from '../../../src/gateway/throttle/attempts.js'
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

  it('when full, forgets the least recently asked key, not the whole view', async () => {
    const { wrapped, calls } = counting(new MemoryFailureThrottle({ maxFailures: 1, windowSeconds: 60 }))
    const t = new CachedFailureThrottle(wrapped, { clearMs: 60_000, maxEntries: 2 })
    await t.check(['user:f'])
    await t.check(['user:g'])
    await t.check(['user:f'])
    expect(calls.check).toBe(2)
    // A third key: user:g, the least recently asked, makes room.
    await t.check(['user:h'])
    await t.check(['user:f'])
    await t.check(['user:h'])
    expect(calls.check).toBe(3)
    await t.check(['user:g'])
    expect(calls.check).toBe(4)
  })
})

describe('a verdict known without asking (peek, checkNow)', () => {
  it('the view answers at once only for keys it holds, and forgets a key a failure names', async () => {
    const t = new CachedFailureThrottle(new MemoryFailureThrottle({ maxFailures: 2, windowSeconds: 60 }))
    expect(t.peek(['user:e'])).toBeNull()
    expect(await t.check(['user:e'])).toBe(0)
    expect(t.peek(['user:e'])).toBe(0)
    expect(t.peek(['user:e', 'ip:9'])).toBeNull()
    await t.recordFailure(['user:e'])
    expect(t.peek(['user:e'])).toBeNull()
  })

  it("an attempt's rules decide at once once every one of its keys was asked, with check's verdict", async () => {
    const { wrapped, calls } = counting(new MemoryFailureThrottle({ maxFailures: 1, windowSeconds: 60 }))
    const cached = () => new CachedFailureThrottle(wrapped)
    const throttle = new RuleAttemptThrottle({ pair: cached(), known: new KnownPairs(cached()), address: cached(), user: cached() })
    const attempt = { realm: 'api' as const, user: 'alice', ip: '192.0.2.7' }
    expect(throttle.checkNow(attempt)).toBeNull()
    expect(await throttle.check(attempt)).toBe(0)
    const asked = calls.check
    expect(throttle.checkNow(attempt)).toBe(0)
    expect(calls.check).toBe(asked)
    // A failure through this gateway blocks the user: the next verdict is asked again, and refuses.
    await throttle.failed(attempt)
    expect(throttle.checkNow(attempt)).toBeNull()
    const wait = await throttle.check(attempt)
    expect(wait).toBeGreaterThan(0)
    expect(throttle.checkNow(attempt)).toBe(wait)
  })
})
