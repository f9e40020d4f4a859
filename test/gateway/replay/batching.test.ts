// Claims made in one turn of the event loop leave Redis-bound in one pipeline, each still
// its own SET NX: the answers are exactly those of separate commands. At most one batch
// awaits its answer; claims made meanwhile leave together when it arrives.
import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../../src/common/redis.js'
import { RedisReplayCache } from '../../../src/gateway/replay/redis.js'
import { PrivateRedis } from '../../helpers/private-redis.js'
import { availableRedis } from '../../helpers/services.js'

const url = await availableRedis()

describe.skipIf(!url)('RedisReplayCache batching', () => {
  let client: RedisClient
  afterEach(() => vi.restoreAllMocks())
  afterAll(() => client?.disconnect())

  it('sends the claims of one turn in one pipeline, with per-claim answers', async () => {
    client = createRedis(url!)
    expect(await redisReady(client)).toBe(true)
    const cache = new RedisReplayCache(client, { prefix: `kigo:test:${randomBytes(6).toString('hex')}:` })
    const pipelines = vi.spyOn(client, 'pipeline')
    const keys = Array.from({ length: 30 }, (_, i) => `k${i % 20}`)
    const answers = await Promise.all(keys.map((k) => cache.claim(k, 60)))
    expect(pipelines).toHaveBeenCalledTimes(1)
    // 20 distinct keys: the first claim of each wins, the 10 repeats lose.
    expect(answers.filter(Boolean)).toHaveLength(20)
    expect(answers.slice(20)).toEqual(Array(10).fill(false))
    // Claims in a later turn see the earlier ones.
    expect(await cache.claim('k0', 60)).toBe(false)
    expect(await cache.claim('fresh', 60)).toBe(true)
  })

  it('holds claims made while a batch is out, and sends them together when it is answered', async () => {
    // A private Redis, paused for writes, holds the first batch's answer back for a while.
    const redis = await PrivateRedis.start()
    const own = createRedis(redis.url)
    const admin = createRedis(redis.url)
    try {
      expect(await redisReady(own)).toBe(true)
      const cache = new RedisReplayCache(own, { prefix: 'kigo:test:' })
      const pipelines = vi.spyOn(own, 'pipeline')
      const sets = vi.spyOn(own, 'set')
      await admin.call('CLIENT', 'PAUSE', '300', 'WRITE')
      const first = [cache.claim('a', 60), cache.claim('b', 60)]
      const later: Array<Promise<boolean>> = []
      for (let turn = 0; turn < 3; turn++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        later.push(cache.claim(`c${turn}`, 60), cache.claim('a', 60))
      }
      expect(pipelines).toHaveBeenCalledTimes(1)
      expect(await Promise.all(first)).toEqual([true, true])
      expect(await Promise.all(later)).toEqual([true, false, true, false, true, false])
      // Two pipelines in all, and no claim sent on its own.
      expect(pipelines).toHaveBeenCalledTimes(2)
      expect(sets).not.toHaveBeenCalled()
      // An idle cache sends a lone claim at once, by itself.
      expect(await cache.claim('d', 60)).toBe(true)
      expect(sets).toHaveBeenCalledTimes(1)
    } finally {
      own.disconnect()
      admin.disconnect()
      await redis.kill()
    }
  })
})
