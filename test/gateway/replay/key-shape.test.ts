// What a stored claim is made of (docs/gateway.md#the-replay-cache): requests that differ
// only in consumer, token, timestamp or nonce (OAuth), or in user or nonce (WSSE), are
// different claims on every backend; and during a rolling upgrade the keys of the earlier
// shape are claimed as well, so that a nonce used at a gateway of either version is
// refused at the other.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../../src/common/redis.js'
import { oauthNonceKey, type CheckedOAuthRequest } from '../../../src/gateway/auth/oauth/verify.js'
import { createReplayCaches } from '../../../src/gateway/replay/create.js'
import { legacyStoredKey, RedisReplayCache, storedDigestBytes, storedKey } from '../../../src/gateway/replay/redis.js'
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

  /** The claim an earlier gateway makes: the whole digest in base64url after its prefix. */
  const oldClaim = async (prefix: string, key: string) => (await oldGateway.set(legacyStoredKey(prefix, key), '1', 'EX', 60, 'NX')) === 'OK'
  const nonce = () => `wsse:alice:${randomBytes(12).toString('base64')}`

  it('the gateway stores 14-byte keys per method, and the earlier shape beside them just after start', async () => {
    const caches = createReplayCaches({ replayFallback: { wsse: 'fail-closed', oauth: 'fail-closed' } } as unknown as Parameters<typeof createReplayCaches>[0], client)
    const [w, o] = [nonce(), oauthKey('c', 't', 1_800_000_000, 'n')]
    expect(await caches.wsse.claim(w, 601)).toBe(true)
    expect(await caches.oauth.claim(o, 601)).toBe(true)
    const stored = (await client.keysBuffer('kr:*')).map((k) => k.length)
    expect(stored).toEqual([14, 14])
    expect(await client.exists(storedKey('kr:w:', w), storedKey('kr:o:', o))).toBe(2)
    expect(await client.exists(legacyStoredKey('kigo:replay:wsse:', w), legacyStoredKey('kigo:replay:oauth:', o))).toBe(2)
    await caches.close()
  })

  for (const together of [1, 5]) {
    it(`while the earlier shape is claimed too (${together} claim(s) in one turn), refuses a nonce an earlier gateway claimed, and an earlier gateway refuses its own`, async () => {
      const cache = new RedisReplayCache(client, { prefix: 'kigo-t:', legacyPrefix: 'kigo-old:', legacyUntil: Date.now() + 60_000 })
      const usedAtOld = Array.from({ length: together }, nonce)
      for (const key of usedAtOld) expect(await oldClaim('kigo-old:', key)).toBe(true)
      expect(await Promise.all(usedAtOld.map((key) => cache.claim(key, 60)))).toEqual(usedAtOld.map(() => false))

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
      expect(await client.exists(storedKey('kigo-t:', key))).toBe(1)
      expect(storedKey('kigo-t:', key)).toHaveLength('kigo-t:'.length + storedDigestBytes)
    }
  })
})
