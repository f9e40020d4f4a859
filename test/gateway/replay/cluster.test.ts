// REDIS_URL with cluster=1 gives a Cluster client; the replay cache works through it
// (a private one-node Redis Cluster holding every slot): the slice sets of a prefix share
// its hash tag's slot, and the earlier shape's keys are set one command each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Cluster } from 'ioredis'
import { createRedis, redisReady, type RedisClient } from '../../../src/common/redis.js'
import { replayEarlierKeyPrefix, replaySetPrefix } from '../../../src/gateway/replay/create.js'
import { legacyStoredKey, RedisReplayCache } from '../../../src/gateway/replay/redis.js'
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

  it('while the earlier shape is claimed too, refuses a nonce an earlier gateway claimed, and sets it for one it grants', async () => {
    const options = { prefix: replaySetPrefix('oauth'), legacyPrefix: replayEarlierKeyPrefix('oauth'), legacyUntil: Date.now() + 60_000 }
    const ca = new RedisReplayCache(a, options)
    const cb = new RedisReplayCache(b, options)
    expect(await b.set(legacyStoredKey('kigo:replay:oauth:', 'oauth:old'), '1', 'EX', 60, 'NX')).toBe('OK')
    expect(await Promise.all([ca.claim('oauth:old', 60), ca.claim('oauth:new', 60), ca.claim('oauth:new', 60)])).toEqual([false, true, false])
    expect(await cb.claim('oauth:old', 60)).toBe(false)
    expect(await b.exists(legacyStoredKey('kigo:replay:oauth:', 'oauth:new'))).toBe(1)
    expect(await b.set(legacyStoredKey('kigo:replay:oauth:', 'oauth:new'), '1', 'EX', 60, 'NX')).toBeNull()
  })
})
