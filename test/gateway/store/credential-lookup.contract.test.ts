// The credential lookup's contract (the "load" step of every verifier), run on every
// backend of helpers/backends.ts: the identity store read directly, and through the
// gateway's cache, each on the embedded database and PostgreSQL. A change written through
// this process's store must be seen by the very next lookup, cached or not; what the cache
// does for changes made elsewhere (TTL, invalidation) is in credential-lookup.test.ts.
import { randomBytes } from 'node:crypto'
import { expect, it } from 'vitest'
import { credentialLookupBackends, describeBackends } from '../../helpers/backends.js'
import { expectedLookups, seedCredentials } from '../../helpers/credential-fixture.js'

const backends = await credentialLookupBackends('lookup-contract')

let serial = 0
const newId = () => `clc_${++serial}_${randomBytes(3).toString('hex')}`

describeBackends('credential lookup contract', backends, (backend) => {
  const fixture = async () => {
    const { store } = backend()
    return { store, lookup: backend().lookup, ...(await seedCredentials(store, newId())) }
  }

  it('returns what the verifiers need for a user, an application and a token', async () => {
    const { lookup, ...seeded } = await fixture()
    const expected = expectedLookups(seeded)
    expect(await lookup.apiPassword(seeded.user.id)).toEqual(expected.apiPassword)
    expect(await lookup.consumer(seeded.app.consumer.key)).toEqual(expected.consumer)
    expect(await lookup.accessToken(seeded.token.token.token)).toEqual(expected.accessToken)
  })

  it('answers null for unknown credentials, again and again', async () => {
    const { lookup } = backend()
    for (let i = 0; i < 2; i++) {
      expect(await lookup.apiPassword(newId())).toBeNull()
      expect(await lookup.consumer(`unknown-${newId()}`)).toBeNull()
      expect(await lookup.accessToken(`unknown-${newId()}`)).toBeNull()
    }
  })

  it('finds a user, application and token created after a lookup answered that they were unknown', async () => {
    const { store, lookup } = backend()
    const id = newId()
    expect(await lookup.apiPassword(id)).toBeNull()
    await store.createUser({ id, name: 'Late User', password: 'login', apiPassword: 'late' })
    expect(await lookup.apiPassword(id)).toEqual({ userId: id, userName: 'Late User', apiPassword: 'late' })
  })

  it('sees a new API password, a rotated application secret and a revoked token at the next lookup', async () => {
    const { store, lookup, user, app, token } = await fixture()
    await lookup.apiPassword(user.id)
    await lookup.consumer(app.consumer.key)
    await lookup.accessToken(token.token.token)
    expect(await store.setApiPassword(user.id, 'api-2')).toBe(true)
    const rotated = await store.rotateConsumerSecret(app.consumer.key)
    expect(await store.revokeAccessToken(token.token.token)).toBe(true)
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-2')
    expect((await lookup.consumer(app.consumer.key))?.secret).toBe(rotated!.secret)
    expect((await lookup.accessToken(token.token.token))?.revoked).toBe(true)
  })

  it('forgets an application, and its tokens, once it is deleted', async () => {
    const { store, lookup, app, token } = await fixture()
    expect(await lookup.consumer(app.consumer.key)).not.toBeNull()
    expect(await lookup.accessToken(token.token.token)).not.toBeNull()
    await store.deleteConsumer(app.consumer.key)
    expect(await lookup.consumer(app.consumer.key)).toBeNull()
    expect(await lookup.accessToken(token.token.token)).toBeNull()
  })

  it('agrees among concurrent lookups of one credential', async () => {
    const { lookup, app } = await fixture()
    const answers = await Promise.all(Array.from({ length: 10 }, () => lookup.consumer(app.consumer.key)))
    for (const answer of answers) expect(answer).toEqual(answers[0])
    expect(answers[0]?.key).toBe(app.consumer.key)
  })

  it('hands out answers a caller may change without changing the next answer', async () => {
    const { lookup, user, app } = await fixture()
    const consumer = (await lookup.consumer(app.consumer.key))!
    consumer.scopes.push('write_private')
    consumer.secret = 'changed'
    const password = (await lookup.apiPassword(user.id))!
    password.apiPassword = 'changed'
    expect(await lookup.consumer(app.consumer.key)).toEqual({ key: app.consumer.key, name: 'Lookup App', secret: app.secret, scopes: ['read_public', 'write_public'] })
    expect((await lookup.apiPassword(user.id))?.apiPassword).toBe('api-1')
  })
})
