// Redis going away mid-test (docs/operations.md#dependability): a private redis-server is killed and restarted on
// the same port. Fail-closed refuses quickly (no hang) and counts; the memory policy keeps
// answering and counts fail-open; both recover by themselves, without being recreated.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedis, redisReady } from '../../../src/common/redis.js'
import { createReplayCaches } from '../../../src/gateway/replay/create.js'
import { RedisReplayCache } from '../../../src/gateway/replay/redis.js'
import { ResilientReplayCache } from '../../../src/gateway/replay/resilient.js'
import { ReplayCacheUnavailable } from '../../../src/gateway/replay/types.js'
import { eventually, PrivateRedis, startWitnessedRedis, type WitnessedRedis } from '../../helpers/private-redis.js'

const nonce = () => `u:${randomBytes(8).toString('hex')}`

/** Several claims made in one turn, so that they leave as one script (replay/redis.ts). */
async function claimTurn(cache: RedisReplayCache, keys: string[]): Promise<{ ms: number; results: Array<PromiseSettledResult<boolean>> }> {
  const started = Date.now()
  const results = await Promise.allSettled(keys.map((k) => cache.claim(k, 60)))
  return { ms: Date.now() - started, results }
}

/** True when every claim of a turn was refused as the replay cache being unavailable. */
const allUnavailable = (results: Array<PromiseSettledResult<boolean>>) =>
  results.every((r) => r.status === 'rejected' && r.reason instanceof ReplayCacheUnavailable)

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; result: PromiseSettledResult<T> }> {
  const started = Date.now()
  const [result] = await Promise.allSettled([run()])
  return { ms: Date.now() - started, result }
}

describe('replay cache while Redis goes away and comes back', () => {
  let served: WitnessedRedis
  let redis: PrivateRedis
  const counts = { closedErrors: 0, openErrors: 0, failOpen: 0 }
  let direct: RedisReplayCache
  let closed: ResilientReplayCache
  let open: ResilientReplayCache
  /** Another gateway on the same Redis: proves a claim really reached Redis. */
  let other: RedisReplayCache

  beforeAll(async () => {
    served = await startWitnessedRedis()
    redis = served.redis
    direct = new RedisReplayCache(served.client)
    other = new RedisReplayCache(served.witness)
    closed = new ResilientReplayCache(direct, { policy: 'fail-closed', onError: () => counts.closedErrors++ })
    open = new ResilientReplayCache(direct, {
      policy: 'memory',
      onError: () => counts.openErrors++,
      onFailOpen: () => counts.failOpen++,
    })
  })

  afterAll(async () => {
    await closed?.close()
    await open?.close()
    await served?.close()
  })

  it('claims through Redis while it is up', async () => {
    const k = nonce()
    expect(await closed.claim(k, 60)).toBe(true)
    expect(await other.claim(k, 60)).toBe(false)
    expect(await open.claim(k, 60)).toBe(false)
    expect(counts).toEqual({ closedErrors: 0, openErrors: 0, failOpen: 0 })
  })

  it('refuses quickly when Redis is killed: fail-closed throws, memory policy answers', async () => {
    await redis.kill()

    const bare = await timed(() => direct.claim(nonce(), 60))
    expect(bare.result.status).toBe('rejected')
    expect((bare.result as PromiseRejectedResult).reason).toBeInstanceOf(ReplayCacheUnavailable)
    expect(bare.ms).toBeLessThan(1000)
    const turn = await claimTurn(direct, [nonce(), nonce(), nonce(), nonce()])
    expect(allUnavailable(turn.results)).toBe(true)
    expect(turn.ms).toBeLessThan(1000)

    for (let i = 0; i < 3; i++) {
      const attempt = await timed(() => closed.claim(nonce(), 60))
      expect(attempt.result.status).toBe('rejected')
      expect((attempt.result as PromiseRejectedResult).reason).toBeInstanceOf(ReplayCacheUnavailable)
      expect(attempt.ms).toBeLessThan(1000)
    }
    expect(counts.closedErrors).toBe(3)
    expect(closed.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    await expect(closed.ping()).rejects.toBeInstanceOf(ReplayCacheUnavailable)

    const k = `outage:${nonce()}`
    const first = await timed(() => open.claim(k, 60))
    expect(first.result).toEqual({ status: 'fulfilled', value: true })
    expect(first.ms).toBeLessThan(1000)
    expect(await open.claim(k, 60)).toBe(false)
    expect(counts.failOpen).toBe(2)
    expect(counts.openErrors).toBe(2)
  })

  it('recovers by itself when Redis comes back on the same port', async () => {
    await redis.start()

    const k = nonce()
    const closedMs = await eventually(() => closed.claim(k, 60))
    expect(closedMs).toBeLessThan(8000)
    // The claim reached the restarted Redis: the other gateway refuses the nonce.
    expect(await other.claim(k, 60)).toBe(false)
    await expect(closed.ping()).resolves.toBeUndefined()
    // A turn's claims reach it too, as a script the restarted Redis never had.
    const turnKeys = [nonce(), nonce(), nonce()]
    expect((await claimTurn(direct, [...turnKeys, turnKeys[0]!])).results).toEqual([true, true, true, false].map((value) => ({ status: 'fulfilled', value })))
    for (const k2 of turnKeys) expect(await other.claim(k2, 60)).toBe(false)

    await eventually(async () => {
      const probe = nonce()
      return (await open.claim(probe, 60)) && !(await other.claim(probe, 60))
    })
    // Once recovered, claims go to Redis again and are no longer counted as fail-open.
    const settled = counts.failOpen
    const k3 = nonce()
    expect(await open.claim(k3, 60)).toBe(true)
    expect(await other.claim(k3, 60)).toBe(false)
    expect(counts.failOpen).toBe(settled)
  })

  it('still refuses, after recovery, a nonce first seen during the outage', async () => {
    await redis.kill()
    const k = nonce()
    expect(await open.claim(k, 60)).toBe(true)
    await redis.start()
    await eventually(async () => {
      const probe = nonce()
      return (await open.claim(probe, 60)) && !(await other.claim(probe, 60))
    })
    // Redis never saw k, yet it was used: it stays refused.
    expect(await open.claim(k, 60)).toBe(false)
  })

  it('times out instead of hanging when Redis accepts connections but does not answer', async () => {
    await eventually(async () => (await closed.claim(nonce(), 60)) === true)
    redis.pause()
    try {
      const attempt = await timed(() => closed.claim(nonce(), 60))
      expect(attempt.result.status).toBe('rejected')
      expect((attempt.result as PromiseRejectedResult).reason).toBeInstanceOf(ReplayCacheUnavailable)
      expect(attempt.ms).toBeLessThan(1500)
      const turn = await claimTurn(direct, [nonce(), nonce(), nonce()])
      expect(allUnavailable(turn.results)).toBe(true)
      expect(turn.ms).toBeLessThan(1500)
    } finally {
      redis.resume()
    }
    await eventually(async () => (await closed.claim(nonce(), 60)) === true)
  })
})

describe('createReplayCaches', () => {
  it('keeps embedded caches in memory and labels Redis failures with the method and its policy', async () => {
    const auth = { replayFallback: { wsse: 'memory', oauth: 'fail-closed' } } as unknown as Parameters<typeof createReplayCaches>[0]
    const embedded = createReplayCaches(auth, undefined)
    expect(await embedded.wsse.claim('n', 5)).toBe(true)
    expect(await embedded.wsse.claim('n', 5)).toBe(false)
    expect(await embedded.oauth.claim('n', 5)).toBe(true)
    await embedded.close()

    const redis = await PrivateRedis.start()
    const client = createRedis(redis.url)
    expect(await redisReady(client)).toBe(true)
    await redis.kill()
    const seen: string[] = []
    const caches = createReplayCaches(auth, client, {
      onError: (_err, method) => seen.push(`error:${method}`),
      onFailOpen: (method) => seen.push(`fail-open:${method}`),
    })
    expect(await caches.wsse.claim('n', 5)).toBe(true)
    await expect(caches.oauth.claim('n', 5)).rejects.toBeInstanceOf(ReplayCacheUnavailable)
    expect(seen).toEqual(['error:wsse', 'fail-open:wsse', 'error:oauth'])
    await caches.close()
    client.disconnect()
  })
})
