// What a stored claim is made of (docs/gateway.md#the-replay-cache): requests that differ
// only in consumer, token, timestamp or nonce (OAuth), or in user or nonce (WSSE), are
// different claims on every backend. In Redis a claim is a member of 9 digest bytes in the
// set of its time slice, refused for its TTL across slices and gateways; during a rolling
// upgrade the keys of the earlier shape (one per claim) are claimed as well, so that a
// nonce used at a gateway of either version is refused at the other.
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../../src/common/redis.js'
import { oauthNonceKey, type CheckedOAuthRequest } from '../../../src/gateway/auth/oauth/verify.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { createReplayCaches, legacyKeyShapeMs } from '../../../src/gateway/replay/create.js'
import { defaultSliceMs, legacyStoredKey, RedisReplayCache, sliceKey, storedDigestBytes, storedMember } from '../../../src/gateway/replay/redis.js'
import { describeBackends, replayCacheBackends } from '../../helpers/backends.js'
import { PrivateRedis } from '../../helpers/private-redis.js'

const backends = await replayCacheBackends('keyshape')

const oauthKey = (consumerKey: string, token: string, timestamp: number, nonce: string) =>
  oauthNonceKey({ consumerKey, token, timestamp, nonce } as CheckedOAuthRequest)

describeBackends('the claims two requests make', backends, (backend) => {
  it('are distinct when OAuth requests differ only in consumer, token, timestamp or nonce, and each is refused again', async () => {
    const { cache } = backend()
    const nonce = randomBytes(8).toString('hex')
    const keys = [
      oauthKey('consumer-a', 'token-1', 1_800_000_000, nonce),
      oauthKey('consumer-b', 'token-1', 1_800_000_000, nonce),
      oauthKey('consumer-a', 'token-2', 1_800_000_000, nonce),
      oauthKey('consumer-a', 'token-1', 1_800_000_001, nonce),
      oauthKey('consumer-a', 'token-1', 1_800_000_000, `${nonce}x`),
      // A separator moved between fields is another request, not the same text.
      oauthKey('consumer-a:token-1', '', 1_800_000_000, nonce),
    ]
    expect(new Set(keys).size).toBe(keys.length)
    for (const key of keys) expect(await cache.claim(key, 60)).toBe(true)
    for (const key of keys) expect(await cache.claim(key, 60)).toBe(false)
  })

  it('are distinct when WSSE requests differ only in user or nonce', async () => {
    const { cache } = backend()
    const nonce = randomBytes(16).toString('base64')
    const keys = [`wsse:alice:${nonce}`, `wsse:bob:${nonce}`, `wsse:alice:${randomBytes(16).toString('base64')}`]
    for (const key of keys) expect(await cache.claim(key, 60)).toBe(true)
    for (const key of keys) expect(await cache.claim(key, 60)).toBe(false)
  })
})

describe('keys in a Redis of their own', () => {
  let redis: PrivateRedis
  let client: RedisClient
  let oldGateway: RedisClient

  beforeAll(async () => {
    redis = await PrivateRedis.start()
    client = createRedis(redis.url)
    oldGateway = createRedis(redis.url)
    expect(await redisReady(client)).toBe(true)
    expect(await redisReady(oldGateway)).toBe(true)
  })

  afterAll(async () => {
    client?.disconnect()
    oldGateway?.disconnect()
    await redis?.kill()
  })

  /** The claim a 0.1.0 gateway makes: its prefix and the digest in base64url, a key of its own. */
  const oldClaim = async (prefix: string, key: string) => (await oldGateway.set(legacyStoredKey(prefix, key), '1', 'EX', 60, 'NX')) === 'OK'
  const nonce = () => `wsse:alice:${randomBytes(12).toString('base64')}`
  /** Redis' clock in ms, the one the slices follow. */
  const redisNow = async () => {
    const [seconds, micros] = await client.time()
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  }
  /** The slice sets under a prefix that hold a claim's member. */
  const slicesHolding = async (prefix: string, key: string) => {
    const holding: string[] = []
    for (const slice of await client.keys(`${prefix}*`)) if (await client.sismember(slice, storedMember(key))) holding.push(slice)
    return holding
  }

  it('the gateway keeps a set per method and minute of 9-byte members, kept until the TTL of its last claim, and the earlier shape beside it just after start', async () => {
    const caches = createReplayCaches({ replayFallback: { wsse: 'fail-closed', oauth: 'fail-closed' } } as unknown as Parameters<typeof createReplayCaches>[0], client)
    const [w, o] = [nonce(), oauthKey('c', 't', 1_800_000_000, 'n')]
    const before = await redisNow()
    expect(await Promise.all([caches.wsse.claim(w, 601), caches.oauth.claim(o, 601), caches.wsse.claim(w, 601)])).toEqual([true, true, false])
    const after = await redisNow()
    expect(defaultSliceMs).toBe(60_000)
    const sets = (await client.keys('kr:{*')).sort()
    expect(sets).toHaveLength(2)
    for (const [set, method, key] of [[sets[1]!, 'w', w], [sets[0]!, 'o', o]] as const) {
      const n = Number(set.slice('kr:{w}:'.length))
      expect(set).toBe(sliceKey(`kr:{${method}}:`, n))
      expect([Math.floor(before / 60_000), Math.floor(after / 60_000)]).toContain(n)
      expect(await client.smembersBuffer(set)).toEqual([storedMember(key)])
      expect(storedMember(key)).toHaveLength(storedDigestBytes)
      // Expires when a claim made at the slice's last moment has had its 601 s.
      const expiresAt = (n + 1) * 60_000 + 601_000
      expect(Number(await client.call('PEXPIRETIME', set))).toBe(expiresAt)
      // The shape 0.1.0 stored: `kigo:replay:<method>:` and the whole SHA-256 in base64url,
      // with the claim's TTL.
      const earlier = `kigo:replay:${method === 'w' ? 'wsse' : 'oauth'}:${createHash('sha256').update(key).digest('base64url')}`
      expect(legacyStoredKey(`kigo:replay:${method === 'w' ? 'wsse' : 'oauth'}:`, key)).toBe(earlier)
      expect(await client.exists(earlier)).toBe(1)
      expect(await client.ttl(earlier)).toBeGreaterThan(590)
    }
    expect(legacyKeyShapeMs).toBe(30 * 60_000)
    await caches.close()
  })

  it('refuses a claimed key for its TTL across slice ends, at the gateway that claimed it and at another, and accepts it after', async () => {
    const at = new RedisReplayCache(client, { prefix: 'kigo-s:', sliceMs: 300 })
    const other = new RedisReplayCache(oldGateway, { prefix: 'kigo-s:', sliceMs: 300 })
    const key = nonce()
    const started = Date.now()
    expect(await at.claim(key, 1)).toBe(true)
    const claimed = Date.now()
    let refusals = 0
    while (Date.now() - started < 850) {
      const answers = await Promise.all([at.claim(key, 1), other.claim(key, 1)])
      // Answered before the TTL can have passed: refused at both.
      if (Date.now() - started < 1000) {
        expect(answers).toEqual([false, false])
        refusals++
      }
      await sleep(40)
    }
    // The claim's second crossed at least two slice ends, and it was held in one slice only.
    expect(refusals).toBeGreaterThan(5)
    expect(await slicesHolding('kigo-s:', key)).toHaveLength(1)
    // The TTL and one slice later, the key is free again, once.
    await sleep(Math.max(0, claimed + 1000 + 300 + 100 - Date.now()))
    expect(await Promise.all([other.claim(key, 1), at.claim(key, 1)])).toEqual([true, false])
  })

  for (const together of [1, 5]) {
    it(`while the earlier shape is claimed too (${together} claim(s) in one turn), refuses a nonce an earlier gateway claimed, and an earlier gateway refuses its own`, async () => {
      const cache = new RedisReplayCache(client, { prefix: 'kigo-t:', legacyPrefix: 'kigo-old:', legacyUntil: Date.now() + 60_000 })
      const usedAtOld = Array.from({ length: together }, nonce)
      for (const key of usedAtOld) expect(await oldClaim('kigo-old:', key)).toBe(true)
      expect(await Promise.all(usedAtOld.map((key) => cache.claim(key, 60)))).toEqual(usedAtOld.map(() => false))
      // Refused for good: the member is in a slice as well, for after the earlier shape is over.
      expect(await Promise.all(usedAtOld.map((key) => cache.claim(key, 60)))).toEqual(usedAtOld.map(() => false))
      for (const key of usedAtOld) expect(await slicesHolding('kigo-t:', key)).toHaveLength(1)

      const usedAtNew = Array.from({ length: together }, nonce)
      expect(await Promise.all(usedAtNew.map((key) => cache.claim(key, 60)))).toEqual(usedAtNew.map(() => true))
      for (const key of usedAtNew) {
        expect(await oldClaim('kigo-old:', key)).toBe(false)
        expect(await cache.claim(key, 60)).toBe(false)
        const ttl = await client.ttl(legacyStoredKey('kigo-old:', key))
        expect(ttl).toBeGreaterThan(50)
        expect(ttl).toBeLessThanOrEqual(60)
      }
    })
  }

  it('grants exactly one of 40 concurrent claims of one nonce shared between new and earlier gateways', async () => {
    const cache = new RedisReplayCache(client, { prefix: 'kigo-t:', legacyPrefix: 'kigo-old:', legacyUntil: Date.now() + 60_000 })
    const key = nonce()
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? cache.claim(key, 60) : oldClaim('kigo-old:', key))))
    expect(results.filter(Boolean)).toHaveLength(1)
  })

  it('once the earlier shape is over, neither reads nor writes it', async () => {
    const cache = new RedisReplayCache(client, { prefix: 'kigo-t:', legacyPrefix: 'kigo-old:', legacyUntil: Date.now() - 1 })
    const usedAtOld = nonce()
    expect(await oldClaim('kigo-old:', usedAtOld)).toBe(true)
    expect(await cache.claim(usedAtOld, 60)).toBe(true)
    const fresh = [nonce(), nonce()]
    expect(await Promise.all(fresh.map((key) => cache.claim(key, 60)))).toEqual([true, true])
    for (const key of fresh) {
      expect(await client.exists(legacyStoredKey('kigo-old:', key))).toBe(0)
      expect(await slicesHolding('kigo-t:', key)).toHaveLength(1)
    }
  })
})
