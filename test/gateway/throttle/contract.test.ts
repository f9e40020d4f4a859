// The failure-throttle contract (SPEC §4.7), run against every backend of helpers/backends.ts
// (memory, a real Redis, and the decorators the gateway stacks over Redis): past
// `maxFailures` failures in the window a key must wait; reset clears; the window ends.
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { RedisFailureThrottle } from '../../../src/gateway/throttle/redis.js'
import { addressNetwork } from '../../../src/gateway/throttle/attempts.js'
import type { FailureThrottle, ThrottleSettings } from '../../../src/gateway/throttle/types.js'
import { describeBackends, failureThrottleBackends } from '../../helpers/backends.js'
import { redisClients } from '../../helpers/redis-clients.js'
import { availableRedis } from '../../helpers/services.js'

const backends = await failureThrottleBackends('throttle')
const redisUrl = await availableRedis()
const redis = redisClients(redisUrl, 'throttle')
const { prefix } = redis
const redisClient = () => redis.client()

const user = () => `user:${randomBytes(4).toString('hex')}`
const ip = () => `ip:192.0.2.${Math.floor(Math.random() * 250)}-${randomBytes(3).toString('hex')}`

async function fail(t: FailureThrottle, keys: string[], times: number): Promise<void> {
  for (let i = 0; i < times; i++) await t.recordFailure(keys)
}

describeBackends('failure throttle contract', backends, (backend) => {
  const make = async (s: ThrottleSettings) => backend().make(s)

  it('allows until the threshold, then asks to wait for the rest of the window', async () => {
    const t = await make({ maxFailures: 3, windowSeconds: 60 })
    const keys = [user(), ip()]
    expect(await t.check(keys)).toBe(0)
    await fail(t, keys, 2)
    expect(await t.check(keys)).toBe(0)
    await fail(t, keys, 1)
    const wait = await t.check(keys)
    expect(wait).toBeGreaterThan(55)
    expect(wait).toBeLessThanOrEqual(60)
  })

  it('counts per key: a blocked address blocks every user from it, not other addresses', async () => {
    const t = await make({ maxFailures: 2, windowSeconds: 60 })
    const [alice, bob, addr, other] = [user(), user(), ip(), ip()]
    await fail(t, [alice, addr], 1)
    await fail(t, [bob, addr], 1)
    expect(await t.check([alice])).toBe(0)
    expect(await t.check([bob])).toBe(0)
    expect(await t.check([addr])).toBeGreaterThan(0)
    expect(await t.check([user(), addr])).toBeGreaterThan(0)
    expect(await t.check([alice, other])).toBe(0)
  })

  it('reset clears the keys it is given', async () => {
    const t = await make({ maxFailures: 2, windowSeconds: 60 })
    const [u, a] = [user(), ip()]
    await fail(t, [u, a], 2)
    expect(await t.check([u])).toBeGreaterThan(0)
    await t.reset([u])
    expect(await t.check([u])).toBe(0)
    expect(await t.check([a])).toBeGreaterThan(0)
    await t.recordFailure([u])
    expect(await t.check([u])).toBe(0)
  })

  it('lets a key through again once its window has ended', async () => {
    const t = await make({ maxFailures: 2, windowSeconds: 1 })
    const keys = [user()]
    await fail(t, keys, 2)
    expect(await t.check(keys)).toBe(1)
    await sleep(1200)
    expect(await t.check(keys)).toBe(0)
    // A fresh window: one failure is not enough to block.
    await t.recordFailure(keys)
    expect(await t.check(keys)).toBe(0)
  })

  it('counts concurrent failures exactly', async () => {
    const t = await make({ maxFailures: 50, windowSeconds: 60 })
    const keys = [user(), ip()]
    await Promise.all(Array.from({ length: 49 }, () => t.recordFailure(keys)))
    expect(await t.check(keys)).toBe(0)
    await t.recordFailure(keys)
    expect(await t.check(keys)).toBeGreaterThan(0)
  })
})

describe.skipIf(!redisUrl)('two gateways on one Redis', () => {
  it('share the failure counts', async () => {
    const settings = { maxFailures: 4, windowSeconds: 60, prefix }
    const a = new RedisFailureThrottle(await redisClient(), settings)
    const b = new RedisFailureThrottle(await redisClient(), settings)
    const keys = [user(), ip()]
    await fail(a, keys, 2)
    await fail(b, keys, 2)
    expect(await a.check(keys)).toBeGreaterThan(0)
    expect(await b.check(keys)).toBeGreaterThan(0)
    await a.reset(keys)
    expect(await b.check(keys)).toBe(0)
  })
})

describe('addressNetwork', () => {
  it('counts IPv4 alone, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    expect(addressNetwork('203.0.113.9')).toBe('203.0.113.9')
    expect(addressNetwork('::ffff:203.0.113.9')).toBe('203.0.113.9')
    expect(addressNetwork('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressNetwork('2001:0db8:0000:0000:ffff:1:2:3')).toBe('2001:db8:0:0::/64')
    expect(addressNetwork('2001:db8:1:2::a')).toBe(addressNetwork('2001:db8:1:2:ffff:1:2:3'))
    expect(addressNetwork('2001:db8:1:3::1')).not.toBe(addressNetwork('2001:db8:1:2::1'))
    expect(addressNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(addressNetwork('::1')).toBe('0:0:0:0::/64')
  })
})
