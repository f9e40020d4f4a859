// The replay cache contract (docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a), run against every backend of
// helpers/backends.ts: memory, a real Redis, and Redis behind the resilient decorator
// (Redis ones skipped with a reason outside CI when Redis is absent).
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { RedisReplayCache, storedDigestBytes, storedMember } from '../../../src/gateway/replay/redis.js'
import { describeBackends, replayCacheBackends } from '../../helpers/backends.js'
import { redisClients } from '../../helpers/redis-clients.js'
import { availableRedis } from '../../helpers/services.js'

const backends = await replayCacheBackends('replay')
const redisUrl = await availableRedis()
const redis = redisClients(redisUrl, 'replay')
const { prefix } = redis
const redisClient = () => redis.client()

const unique = () => `user-${randomBytes(4).toString('hex')}:nonce-${randomBytes(8).toString('base64')}`

describeBackends('replay cache contract', backends, (backend) => {
  const make = async () => backend().cache

  it('accepts a first claim and refuses the second', async () => {
    const cache = await make()
    const key = unique()
    expect(await cache.claim(key, 60)).toBe(true)
    expect(await cache.claim(key, 60)).toBe(false)
    expect(await cache.claim(key, 60)).toBe(false)
  })

  it('keeps different keys independent', async () => {
    const cache = await make()
    const a = unique()
    expect(await cache.claim(a, 60)).toBe(true)
    expect(await cache.claim(`${a}x`, 60)).toBe(true)
    expect(await cache.claim(unique(), 60)).toBe(true)
    expect(await cache.claim(a, 60)).toBe(false)
  })

  it('accepts a key again once its TTL has passed', async () => {
    const cache = await make()
    const short = unique()
    const long = unique()
    expect(await cache.claim(short, 1)).toBe(true)
    expect(await cache.claim(long, 30)).toBe(true)
    await sleep(400)
    expect(await cache.claim(short, 1)).toBe(false)
    await sleep(1200)
    expect(await cache.claim(short, 1)).toBe(true)
    expect(await cache.claim(long, 30)).toBe(false)
  })

  it('grants exactly one of 50 concurrent claims of one key', async () => {
    const cache = await make()
    const key = unique()
    const results = await Promise.all(Array.from({ length: 50 }, () => cache.claim(key, 60)))
    expect(results.filter(Boolean)).toHaveLength(1)
  })

  it("serves 21 clients' claims, each client's nonces held apart, and refuses every one again", async () => {
    const cache = await make()
    const keys = Array.from({ length: 21 }, (_, c) => Array.from({ length: 20 }, () => [unique(), `client-${c}`] as const)).flat()
    for (const [key, client] of keys) expect(await cache.claim(key, 60, client)).toBe(true)
    for (const [key, client] of keys) expect(await cache.claim(key, 60, client)).toBe(false)
  })

  it('accepts long keys and odd characters', async () => {
    const cache = await make()
    const key = `${'ü'.repeat(5000)}:\r\n\0:${unique()}`
    expect(await cache.claim(key, 60)).toBe(true)
    expect(await cache.claim(key, 60)).toBe(false)
  })

  it('answers ping', async () => {
    const cache = await make()
    await expect(cache.ping()).resolves.toBeUndefined()
  })
})

describe.skipIf(!redisUrl)('two gateways on one Redis', () => {
  it('refuses at one a key claimed at the other, each with its own client', async () => {
    const a = new RedisReplayCache(await redisClient(), { prefix })
    const b = new RedisReplayCache(await redisClient(), { prefix })
    const k1 = unique()
    const k2 = unique()
    expect(await a.claim(k1, 60)).toBe(true)
    expect(await b.claim(k1, 60)).toBe(false)
    expect(await b.claim(k2, 60)).toBe(true)
    expect(await a.claim(k2, 60)).toBe(false)
  })

  it('grants exactly one of 50 concurrent claims spread over two clients', async () => {
    const a = new RedisReplayCache(await redisClient(), { prefix })
    const b = new RedisReplayCache(await redisClient(), { prefix })
    const key = unique()
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).claim(key, 60)))
    expect(results.filter(Boolean)).toHaveLength(1)
  })

  it('stores each claim as a member of 9 digest bytes in its slice set, whatever the length of the claimed key, the set expiring after the TTL', async () => {
    const client = await redisClient()
    const own = `${prefix}bounded:`
    const cache = new RedisReplayCache(client, { prefix: own })
    const claimed = ['x'.repeat(10_000), `wsse:alice:${'n'.repeat(200)}`]
    expect(await Promise.all(claimed.map((key) => cache.claim(key, 7)))).toEqual([true, true])
    const [slice, ...others] = await client.keys(`${own}*`)
    expect(others).toEqual([])
    const members = await client.smembersBuffer(slice!)
    expect(members.map((m) => m.length)).toEqual([storedDigestBytes, storedDigestBytes])
    expect(members.map((m) => m.toString('hex')).sort()).toEqual(claimed.map((key) => storedMember(key).toString('hex')).sort())
    // Slices of a minute: kept until the TTL of the slice's last possible claim has passed.
    const left = await client.pttl(slice!)
    expect(left).toBeGreaterThan(7_000)
    expect(left).toBeLessThanOrEqual(67_000)
    expect(storedDigestBytes).toBe(9)
    await client.del(slice!)
  })
})
