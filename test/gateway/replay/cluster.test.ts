// REDIS_URL with cluster=1 gives a Cluster client; the replay cache works through it
// (a private one-node Redis Cluster holding every slot).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Cluster } from 'ioredis'
import { createRedis, redisReady, type RedisClient } from '../../../src/common/redis.js'
import { RedisReplayCache } from '../../../src/gateway/replay/redis.js'
import { PrivateRedis } from '../../helpers/private-redis.js'

describe('replay cache on a Redis Cluster', () => {
  let redis: PrivateRedis
  let a: RedisClient
  let b: RedisClient

  beforeAll(async () => {
    redis = await PrivateRedis.startCluster()
    a = createRedis(`redis://127.0.0.1:${redis.port}?cluster=1`)
    b = createRedis(`redis://127.0.0.1:${redis.port},127.0.0.1:${redis.port}`)
    expect(await redisReady(a)).toBe(true)
    expect(await redisReady(b)).toBe(true)
  })

  afterAll(async () => {
    a?.disconnect()
    b?.disconnect()
    await redis?.kill()
  })

  it('claims once across two Cluster clients', async () => {
    expect(a).toBeInstanceOf(Cluster)
    const ca = new RedisReplayCache(a)
    const cb = new RedisReplayCache(b)
    expect(await ca.claim('wsse:alice:n1', 60)).toBe(true)
    expect(await cb.claim('wsse:alice:n1', 60)).toBe(false)
    expect(await cb.claim('wsse:alice:n2', 60)).toBe(true)
    await expect(ca.ping()).resolves.toBeUndefined()
  })
})
