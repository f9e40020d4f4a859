// Claims made in one turn of the event loop leave Redis-bound in one pipeline, each still
// its own SET NX: the answers are exactly those of separate commands.
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../../src/common/redis.js'
import { RedisReplayCache } from '../../../src/gateway/replay/redis.js'
import { availableRedis } from '../../helpers/services.js'

const url = await availableRedis()

describe.skipIf(!url)('RedisReplayCache batching', () => {
  let client: RedisClient
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
})
