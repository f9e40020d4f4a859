// CachedCredentialLookup over a real identity store, on each storage backend of
// helpers/backends.ts. A thin counting wrapper shows when the store is actually asked.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { CachedCredentialLookup, type SqlIdentityStore } from '../../../src/gateway/store/index.js'
import { openIdentityStore } from '../../../src/gateway/identity.js'
import { describeBackends, identityStoreBackends } from '../../helpers/backends.js'
import { expectedLookups, seedCredentials } from '../../helpers/credential-fixture.js'

const backends = await identityStoreBackends('lookup')

let store: SqlIdentityStore
/** A second store over the same database, as another gateway process would be: its changes are not announced here. */
let elsewhere: SqlIdentityStore

/** The store, with every call counted by method name (onChange passes through). */
function counted(target: SqlIdentityStore, failNext: Set<string> = new Set()) {
  const calls: Record<string, number> = {}
  const proxy = new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver)
      if (typeof value !== 'function' || typeof prop !== 'string') return value
      return (...args: unknown[]) => {
        calls[prop] = (calls[prop] ?? 0) + 1
        if (failNext.delete(prop)) return Promise.reject(new Error('database unavailable'))
        return value.apply(obj, args)
      }
    },
  })
  return { proxy, calls }
}

let clock: number
const now = () => clock
beforeEach(() => {
  clock = 1_000_000
})

let serial = 0
const newId = () => `look_${++serial}_${randomBytes(3).toString('hex')}`

const fixture = () => seedCredentials(store, newId())

describeBackends('CachedCredentialLookup', backends, (backend) => {
  beforeAll(async () => {
    store = await openIdentityStore(backend().options)
    elsewhere = await openIdentityStore(backend().options)
  })

  afterAll(async () => {
    await store?.close()
    await elsewhere?.close()
  })

  it('returns what the verifiers need, and null for unknown credentials', async () => {
    const seeded = await fixture()
    const expected = expectedLookups(seeded)
    const lookup = new CachedCredentialLookup(store, { now })
    expect(await lookup.apiPassword(seeded.user.id)).toEqual(expected.apiPassword)
    expect(await lookup.consumer(seeded.app.consumer.key)).toEqual(expected.consumer)
    expect(await lookup.accessToken(seeded.token.token.token)).toEqual(expected.accessToken)
    expect(await lookup.apiPassword(newId())).toBeNull()
    expect(await lookup.consumer(randomBytes(18).toString('base64url'))).toBeNull()
    expect(await lookup.accessToken(randomBytes(24).toString('base64url'))).toBeNull()
  })

  it('answers a second lookup from memory', async () => {
    const { user, app, token } = await fixture()
    const { proxy, calls } = counted(store)
    const lookup = new CachedCredentialLookup(proxy, { now })
    for (let i = 0; i < 2; i++) {
      await lookup.apiPassword(user.id)
      await lookup.consumer(app.consumer.key)
      await lookup.accessToken(token.token.token)
      clock += 4000
    }
    expect(calls).toEqual({ onChange: 1, getApiPassword: 1, getConsumer: 1, getAccessToken: 1, getUser: 1 })
  })

  it('remembers unknown credentials briefly, then asks again', async () => {
    const { proxy, calls } = counted(store)
    const lookup = new CachedCredentialLookup(proxy, { now, negativeTtlMs: 2000 })
    const key = randomBytes(18).toString('base64url')
    expect(await lookup.consumer(key)).toBeNull()
    expect(await lookup.consumer(key)).toBeNull()
    expect(calls.getConsumer).toBe(1)
    clock += 2001
    expect(await lookup.consumer(key)).toBeNull()
    expect(calls.getConsumer).toBe(2)
  })

  it('shares one store call among concurrent lookups of one key', async () => {
    const { user } = await fixture()
    const { proxy, calls } = counted(store)
    const lookup = new CachedCredentialLookup(proxy, { now })
    const results = await Promise.all(Array.from({ length: 5 }, () => lookup.apiPassword(user.id)))
    expect(results.every((r) => r?.apiPassword === 'api-1')).toBe(true)
    expect(calls.getApiPassword).toBe(1)
  })

  it('sees changes made through the store of this process at once', async () => {
    const { user, app, token } = await fixture()
    const lookup = new CachedCredentialLookup(store, { now })
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-1')
    await store.setApiPassword(user.id, 'api-2')
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-2')

    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(false)
    await store.revokeAccessToken(token.token.token)
    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(true)

    // A user looked up while unknown, then created, is found at once.
    const id = newId()
    expect(await lookup.apiPassword(id)).toBeNull()
    await store.createUser({ id, name: 'Late', password: 'login', apiPassword: 'late-api' })
    expect(await lookup.apiPassword(id)).toEqual({ userId: id, userName: 'Late', apiPassword: 'late-api' })

    expect(await lookup.consumer(app.consumer.key)).not.toBeNull()
  })

  it('sees a change made elsewhere at once after explicit invalidation', async () => {
    const { user, app, token } = await fixture()
    const lookup = new CachedCredentialLookup(store, { now })
    await lookup.apiPassword(user.id)
    await lookup.accessToken(token.token.token)

    await elsewhere.setApiPassword(user.id, 'api-elsewhere')
    await elsewhere.revokeAccessToken(token.token.token)
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-1')
    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(false)

    lookup.invalidateUser(user.id)
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-elsewhere')
    lookup.invalidateToken(token.token.token)
    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(true)

    const key = randomBytes(18).toString('base64url')
    expect(await lookup.consumer(key)).toBeNull()
    lookup.invalidateConsumer(key)
    expect(await lookup.consumer(app.consumer.key)).not.toBeNull()
  })

  it('sees a change made elsewhere once the TTL has passed', async () => {
    const { user, token } = await fixture()
    const lookup = new CachedCredentialLookup(store, { now, ttlMs: 5000 })
    await lookup.apiPassword(user.id)
    await lookup.accessToken(token.token.token)
    await elsewhere.setApiPassword(user.id, 'api-elsewhere')
    await elsewhere.revokeAccessToken(token.token.token)

    clock += 4999
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-1')
    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(false)
    clock += 2
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-elsewhere')
    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(true)
  })

  it('keeps a load that raced an invalidation out of the cache', async () => {
    const { user } = await fixture()
    const { proxy, calls } = counted(store)
    const lookup = new CachedCredentialLookup(proxy, { now })
    const pending = lookup.apiPassword(user.id)
    lookup.invalidateUser(user.id)
    await pending
    await lookup.apiPassword(user.id)
    expect(calls.getApiPassword).toBe(2)
  })

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const users = [await fixture(), await fixture(), await fixture()].map((f) => f.user.id)
    const { proxy, calls } = counted(store)
    const lookup = new CachedCredentialLookup(proxy, { now, maxEntries: 2 })
    await lookup.apiPassword(users[0]!)
    await lookup.apiPassword(users[1]!)
    await lookup.apiPassword(users[0]!) // users[0] is now the most recently used
    await lookup.apiPassword(users[2]!) // evicts users[1]
    expect(calls.getApiPassword).toBe(3)
    await lookup.apiPassword(users[0]!)
    expect(calls.getApiPassword).toBe(3)
    await lookup.apiPassword(users[1]!)
    expect(calls.getApiPassword).toBe(4)
  })

  it('does not remember a store failure', async () => {
    const { user } = await fixture()
    const failNext = new Set(['getApiPassword'])
    const { proxy, calls } = counted(store, failNext)
    const lookup = new CachedCredentialLookup(proxy, { now })
    await expect(lookup.apiPassword(user.id)).rejects.toThrow('database unavailable')
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-1')
    expect(calls.getApiPassword).toBe(2)
  })

  it('freshConsumer reads a consumer rotated elsewhere from the store, at most once a second per consumer', async () => {
    const { app } = await fixture()
    const { proxy, calls } = counted(store)
    const lookup = new CachedCredentialLookup(proxy, { now })
    expect((await lookup.consumer(app.consumer.key))?.secret).toBe(app.secret)
    const rotated = await elsewhere.rotateConsumerSecret(app.consumer.key, { overlapSeconds: 3600, now: new Date(clock) })
    expect((await lookup.consumer(app.consumer.key))?.secret).toBe(app.secret)
    const fresh = await lookup.freshConsumer(app.consumer.key)
    expect(fresh).toMatchObject({ secret: rotated!.secret, previous: { secret: app.secret, expiresAt: clock + 3_600_000 } })
    // Cached again: the next lookups are answered from memory.
    expect((await lookup.consumer(app.consumer.key))?.secret).toBe(rotated!.secret)
    expect(calls.getConsumer).toBe(2)
    // Another reload within the second answers from the cache.
    await elsewhere.rotateConsumerSecret(app.consumer.key)
    expect((await lookup.freshConsumer(app.consumer.key))?.secret).toBe(rotated!.secret)
    expect(calls.getConsumer).toBe(2)
    clock += 1001
    const again = await lookup.freshConsumer(app.consumer.key)
    expect(again?.secret).not.toBe(rotated!.secret)
    expect(again?.previous).toBeUndefined()
    expect(calls.getConsumer).toBe(3)
  })

  it('hands out copies: a caller changing a result does not change the cache', async () => {
    const { app } = await fixture()
    const lookup = new CachedCredentialLookup(store, { now })
    const first = await lookup.consumer(app.consumer.key)
    first!.scopes.push('write_private')
    first!.secret = 'changed'
    expect(await lookup.consumer(app.consumer.key)).toMatchObject({ secret: app.secret, scopes: ['read_public', 'write_public'] })
  })

  it('stops following the store after dispose', async () => {
    const { user } = await fixture()
    const lookup = new CachedCredentialLookup(store, { now })
    lookup.dispose()
    await lookup.apiPassword(user.id)
    await store.setApiPassword(user.id, 'api-after-dispose')
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-1')
  })
})
