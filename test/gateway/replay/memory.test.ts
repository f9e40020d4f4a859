// The in-process cache's memory bound: at the cap it refuses new claims (the caller answers
// 503) rather than forgetting an unexpired nonce, and takes claims again as entries expire.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MemoryReplayCache } from '../../../src/gateway/replay/memory.js'
import { ReplayCacheUnavailable, ReplayClientQuotaExceeded } from '../../../src/gateway/replay/types.js'

// The cache reads Date.now and sweeps on setInterval: fake timers move both, so a TTL of a
// second passes without waiting for it.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] })
})
afterEach(() => {
  vi.useRealTimers()
})
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms)

describe('MemoryReplayCache bounds', () => {
  it('refuses new keys when full, still refuses the held ones, and recovers after expiry', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 3 })
    for (const k of ['a', 'b', 'c']) expect(await cache.claim(k, 1)).toBe(true)
    await expect(cache.claim('d', 1)).rejects.toBeInstanceOf(ReplayCacheUnavailable)
    expect(await cache.claim('a', 1)).toBe(false)
    await sleep(1100)
    expect(await cache.claim('d', 1)).toBe(true)
    expect(await cache.claim('a', 1)).toBe(true)
    expect(cache.size).toBeLessThanOrEqual(3)
    await cache.close()
  })

  it('sweeps expired entries on its timer', async () => {
    const cache = new MemoryReplayCache({ sweepIntervalMs: 100 })
    for (let i = 0; i < 100; i++) await cache.claim(`k${i}`, 1)
    expect(cache.size).toBe(100)
    await sleep(1300)
    expect(cache.size).toBe(0)
    await cache.close()
  })

  it('rejects a TTL that is not positive', async () => {
    const cache = new MemoryReplayCache()
    await expect(cache.claim('a', 0)).rejects.toBeInstanceOf(RangeError)
    await expect(cache.claim('a', Number.NaN)).rejects.toBeInstanceOf(RangeError)
    await cache.close()
  })
})

describe('MemoryReplayCache global bound (docs/security.md#replay-cache-bounds)', () => {
  it('by default, serves a 21st client while 20 others hold their whole quota', async () => {
    const cache = new MemoryReplayCache()
    const quota = 50_000
    for (let client = 0; client < 20; client++) {
      for (let i = 0; i < quota; i++) if (!(await cache.claim(`c${client}:n${i}`, 601, `c${client}`))) throw new Error('refused')
      await expect(cache.claim(`c${client}:over`, 601, `c${client}`)).rejects.toBeInstanceOf(ReplayClientQuotaExceeded)
    }
    for (let i = 0; i < 100; i++) expect(await cache.claim(`c20:n${i}`, 601, 'c20')).toBe(true)
    expect(await cache.claim('c0:n0', 601, 'c0')).toBe(false)
    await cache.close()
  }, 120_000)

  it('is the per-client quota times the number of clients', async () => {
    const cache = new MemoryReplayCache({ perClientMax: 2, clients: 3 })
    for (const c of ['a', 'b', 'c']) for (const n of [1, 2]) expect(await cache.claim(`${c}${n}`, 60, c)).toBe(true)
    await expect(cache.claim('d1', 60, 'd')).rejects.toBeInstanceOf(ReplayCacheUnavailable)
    await cache.close()
  })

  it('when full, evicts an expired entry (the earliest, whatever its TTL) instead of refusing, and never a live one', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 3 })
    expect(await cache.claim('long', 30)).toBe(true)
    expect(await cache.claim('short1', 1)).toBe(true)
    expect(await cache.claim('short2', 1)).toBe(true)
    await expect(cache.claim('new', 30)).rejects.toBeInstanceOf(ReplayCacheUnavailable)
    await sleep(1100)
    // The sweep timer (10 s) has not run: room is made at the claim.
    expect(await cache.claim('new', 30)).toBe(true)
    expect(await cache.claim('newer', 30)).toBe(true)
    expect(cache.size).toBe(3)
    // The live entries were kept: still refused as replays.
    expect(await cache.claim('long', 30)).toBe(false)
    expect(await cache.claim('new', 30)).toBe(false)
    await expect(cache.claim('newest', 30)).rejects.toBeInstanceOf(ReplayCacheUnavailable)
    await cache.close()
  })

  it('a key claimed again after expiry is held by its new claim only', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 2 })
    expect(await cache.claim('k', 1)).toBe(true)
    await sleep(1100)
    expect(await cache.claim('k', 30)).toBe(true)
    expect(await cache.claim('other', 30)).toBe(true)
    // The stale record of k's first claim must not evict its live second one.
    await expect(cache.claim('third', 30)).rejects.toBeInstanceOf(ReplayCacheUnavailable)
    expect(await cache.claim('k', 30)).toBe(false)
    await cache.close()
  })

  it("a client's quota is freed as its entries expire", async () => {
    const cache = new MemoryReplayCache({ perClientMax: 2 })
    expect(await cache.claim('a', 1, 'x')).toBe(true)
    expect(await cache.claim('b', 1, 'x')).toBe(true)
    await expect(cache.claim('c', 1, 'x')).rejects.toBeInstanceOf(ReplayClientQuotaExceeded)
    await sleep(1100)
    expect(await cache.claim('c', 1, 'x')).toBe(true)
    await cache.close()
  })
})
