// The in-process cache's memory bound: at the cap it refuses new claims (the caller answers
// 503) rather than forgetting an unexpired nonce, and takes claims again as entries expire.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { MemoryReplayCache } from '../../../src/gateway/replay/memory.js'
import { ReplayCacheUnavailable } from '../../../src/gateway/replay/types.js'

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
