// Throttling while Redis goes away (docs/operations.md#throttling, docs/operations.md#dependability): an outage must not lock everyone out;
// counting falls back to this process (counted as fail-open) and returns to Redis by itself.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisFailureThrottle } from '../../../src/gateway/throttle/redis.js'
import { ResilientFailureThrottle } from '../../../src/gateway/throttle/resilient.js'
import { eventually, startWitnessedRedis, type PrivateRedis, type WitnessedRedis } from '../../helpers/private-redis.js'

const settings = { maxFailures: 3, windowSeconds: 60 }
const user = () => `user:${randomBytes(4).toString('hex')}`

describe('failure throttle while Redis goes away and comes back', () => {
  let served: WitnessedRedis
  let redis: PrivateRedis
  let throttle: ResilientFailureThrottle
  /** Another gateway's view of the shared counts. */
  let other: RedisFailureThrottle
  const counts = { errors: 0, failOpen: 0 }

  beforeAll(async () => {
    served = await startWitnessedRedis()
    redis = served.redis
    throttle = new ResilientFailureThrottle(new RedisFailureThrottle(served.client, settings), settings, {
      onError: () => counts.errors++,
      onFailOpen: () => counts.failOpen++,
    })
    other = new RedisFailureThrottle(served.witness, settings)
  })

  afterAll(async () => {
    await throttle?.close()
    await served?.close()
  })

  it('counts in Redis while it is up', async () => {
    const keys = [user()]
    for (let i = 0; i < 3; i++) await throttle.recordFailure(keys)
    expect(await other.check(keys)).toBeGreaterThan(0)
    expect(counts).toEqual({ errors: 0, failOpen: 0 })
  })

  it('does not lock anyone out when Redis is killed, answers quickly and keeps counting locally', async () => {
    await redis.kill()
    const innocent = [user(), 'ip:198.51.100.1']
    const started = Date.now()
    expect(await throttle.check(innocent)).toBe(0)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(counts.errors).toBeGreaterThan(0)
    expect(counts.failOpen).toBeGreaterThan(0)

    const guesser = [user(), 'ip:198.51.100.2']
    for (let i = 0; i < 3; i++) await throttle.recordFailure(guesser)
    expect(await throttle.check(guesser)).toBeGreaterThan(0)
    expect(await throttle.check(innocent)).toBe(0)
  })

  it('returns to Redis by itself when it comes back, keeping the outage counts until they expire', async () => {
    const guesser = [user()]
    for (let i = 0; i < 3; i++) await throttle.recordFailure(guesser)
    await redis.start()

    const keys = [user()]
    await eventually(async () => {
      await throttle.recordFailure(keys)
      return (await other.check(keys).catch(() => 0)) > 0
    })
    // Counted in this process during the outage: still throttled here.
    expect(await throttle.check(guesser)).toBeGreaterThan(0)
    await throttle.reset(guesser)
    expect(await throttle.check(guesser)).toBe(0)

    const settled = { ...counts }
    const fresh = [user()]
    for (let i = 0; i < 3; i++) await throttle.recordFailure(fresh)
    expect(await other.check(fresh)).toBeGreaterThan(0)
    expect(counts).toEqual(settled)
  })
})
