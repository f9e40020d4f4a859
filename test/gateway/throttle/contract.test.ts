// The failure-throttle contract (docs/operations.md#throttling), run against every backend of helpers/backends.ts
// (memory, a real Redis, and the decorators the gateway stacks over Redis): past
// `maxFailures` failures in the window a key must wait; reset clears; the window ends.
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { RedisFailureThrottle } from '../../../src/gateway/throttle/redis.js'
import { loadConfig } from '../../../src/common/config.js'
import { addressNetwork, KnownPairs, RuleAttemptThrottle } from '../../../src/gateway/throttle/attempts.js'
import { MemoryFailureThrottle } from '../../../src/gateway/throttle/memory.js'
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

describeBackends('the attempt rules over each backend (docs/security.md#throttling)', backends, (backend) => {
  const defaults = loadConfig({ env: {}, secrets: () => ({ secretKey: Buffer.alloc(32, 1).toString('base64'), adminToken: 'an-admin-token-long-enough' }) }).auth.throttle
  const rules = (t: typeof defaults, locks?: { locked(userId: string): boolean }) => {
    const refusals: string[] = []
    const throttle = new RuleAttemptThrottle({
      pair: backend().make({ maxFailures: t.maxFailures, windowSeconds: t.windowSeconds }),
      address: backend().make({ maxFailures: t.addressMaxFailures, windowSeconds: t.addressWindowSeconds }),
      user: backend().make({ maxFailures: t.userMaxFailures, windowSeconds: t.userWindowSeconds }),
      known: new KnownPairs(backend().make({ maxFailures: 1, windowSeconds: t.knownAddressDays * 86_400 })),
    }, Date.now, { onRefusal: (realm, rule) => refusals.push(`${realm}:${rule}`), ...(locks ? { locks } : {}) })
    return { throttle, refusals }
  }
  const at = (u: string, address: string) => ({ realm: 'api' as const, user: u, ip: address })
  const addressOf = () => `198.51.100.${Math.floor(Math.random() * 250)}-${randomBytes(3).toString('hex')}`

  it('with the default settings, 10 failures from each of 12 addresses leave a new address open, each of the 12 closed', async () => {
    const { throttle, refusals } = rules(defaults)
    const u = user()
    const guessers = Array.from({ length: 12 }, addressOf)
    for (const address of guessers) for (let i = 0; i < 10; i++) await throttle.failed(at(u, address))
    expect(await throttle.check(at(u, addressOf()))).toBe(0)
    expect(await throttle.check(at(u, guessers[5]!))).toBeGreaterThan(0)
    expect(refusals).toEqual(['api:pair'])
  })

  it('an address over its budget waits for users it has not seen succeed, and is reported', async () => {
    const { throttle, refusals } = rules({ ...defaults, addressMaxFailures: 20 })
    const sprayer = addressOf()
    const known = user()
    await throttle.succeeded(at(known, sprayer))
    for (let i = 0; i < 20; i++) await throttle.failed(at(user(), sprayer))
    expect(await throttle.check(at(user(), sprayer))).toBeGreaterThan(0)
    expect(await throttle.check(at(known, sprayer))).toBe(0)
    expect(refusals).toEqual(['api:address'])
  })

  it('past the much higher per-user total, new addresses wait, known ones do not, and each refusal is reported', async () => {
    const { throttle, refusals } = rules({ ...defaults, userMaxFailures: 30 })
    const u = user()
    const home = addressOf()
    await throttle.succeeded(at(u, home))
    for (let a = 0; a < 6; a++) {
      const address = addressOf()
      for (let i = 0; i < 5; i++) await throttle.failed(at(u, address))
    }
    expect(await throttle.check(at(u, addressOf()))).toBeGreaterThan(0)
    expect(await throttle.check(at(u, home))).toBe(0)
    expect(refusals).toEqual(['api:user'])
  })

  it("an operator's lock refuses the user at every address, known ones too, and no one else", async () => {
    const u = user()
    const { throttle, refusals } = rules(defaults, { locked: (id) => id === u })
    const home = addressOf()
    await throttle.succeeded(at(u, home))
    expect(throttle.locked(at(u, home))).toBe(true)
    expect(throttle.locked({ realm: 'web', user: u, ip: addressOf() })).toBe(true)
    expect(throttle.locked(at(user(), home))).toBe(false)
    expect(throttle.locked({ realm: 'api', ip: home })).toBe(false)
    expect(refusals).toEqual(['api:locked', 'web:locked'])
  })
})

describe('the attempt rules in memory', () => {
  const attempt = (u: string, address: string) => ({ realm: 'api' as const, user: u, ip: address })
  const memory = () => new MemoryFailureThrottle({ maxFailures: 2, windowSeconds: 60 })
  const manyFailures = () => new MemoryFailureThrottle({ maxFailures: 1_000_000, windowSeconds: 60 })

  it('counts each pair under its own keys after more clients than it keeps keys for', async () => {
    const t = new RuleAttemptThrottle({ pair: memory(), known: new KnownPairs(memory()), address: manyFailures(), user: memory() })
    const [u, other, address] = [user(), user(), '192.0.2.10']
    await t.failed(attempt(u, address))
    // Twelve thousand other clients, more than the keys kept for (10,000), so these are made again.
    for (let i = 0; i < 12_000; i++) expect(await t.check(attempt(`client${i}`, `198.51.${i >> 8}.${i & 255}`))).toBe(0)
    await t.failed(attempt(u, address))
    expect(await t.check(attempt(u, address))).toBeGreaterThan(0)
    expect(await t.check(attempt(other, address))).toBe(0)
    expect(await t.check({ realm: 'web', user: u, ip: address })).toBe(0)
  })

  it('counts a claimed user longer than any user ID under its own keys, as any other', async () => {
    const t = new RuleAttemptThrottle({ pair: memory(), known: new KnownPairs(memory()), address: manyFailures(), user: memory() })
    const long = `x${'y'.repeat(4000)}`
    const longer = `${long}z`
    await t.failed(attempt(long, '192.0.2.11'))
    await t.failed(attempt(long, '192.0.2.11'))
    expect(await t.check(attempt(long, '192.0.2.11'))).toBeGreaterThan(0)
    // Another user sharing all but the last character, and the same user in the other realm, are apart.
    expect(await t.check(attempt(longer, '192.0.2.11'))).toBe(0)
    expect(await t.check({ realm: 'web', user: long, ip: '192.0.2.11' })).toBe(0)
  })

  it("after more users' failures than it remembers, a success still forgets the most recent failures", async () => {
    // The user rule refuses at the first failure: a user's failure that a success did not
    // forget keeps the user out of a new address.
    const oneFailure = () => new MemoryFailureThrottle({ maxFailures: 1, windowSeconds: 3600, maxEntries: 200_000 })
    const t = new RuleAttemptThrottle({ pair: memory(), known: new KnownPairs(memory()), address: manyFailures(), user: oneFailure() })
    const [u, home] = [user(), '192.0.2.20']
    await t.succeeded(attempt(u, home))
    // 99,999 users fail, then u from elsewhere, then one more user: more users than the
    // 100,000 whose failures are remembered.
    for (let i = 0; i < 99_999; i++) await t.failed(attempt(`guessed${i}`, '198.51.100.1'))
    await t.failed(attempt(u, '203.0.113.5'))
    await t.failed(attempt('guessed-last', '198.51.100.1'))
    expect(await t.check(attempt(u, '203.0.113.6'))).toBeGreaterThan(0)
    // u signs in at home again, within the minute its last success is not repeated in:
    // its failure since then, among the most recent, is remembered, so the success is
    // written and the user's failures are forgotten.
    await t.succeeded(attempt(u, home))
    expect(await t.check(attempt(u, '203.0.113.6'))).toBe(0)
  }, 60_000)
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
