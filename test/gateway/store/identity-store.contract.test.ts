// The identity store's contract, run once per backend: the embedded database in a
// temporary directory, and PostgreSQL (skipped with a reason when absent outside CI).
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Db } from '../../../src/common/sql.js'
import {
  Conflict,
  InvalidInput,
  NotFound,
  UnreadableSecret,
  type SqlIdentityStore,
} from '../../../src/gateway/store/index.js'
import { openIdentityStore } from '../../../src/gateway/identity.js'
import { identityStoreBackends, openIdentityStoreForSuite, type IdentityStoreBackend } from '../../helpers/backends.js'

type Backend = IdentityStoreBackend

const backends = await identityStoreBackends('identity')

let serial = 0
/** A fresh valid user id per test, so tests do not depend on each other. */
const newId = (prefix = 'user') => `${prefix}_${++serial}_${randomBytes(3).toString('hex')}`

for (const { name, setup } of backends) {
  describe.skipIf(setup === null)(`identity store contract (${name})`, () => {
    let backend: Backend
    let store: SqlIdentityStore
    let raw: Db
    openIdentityStoreForSuite(setup!, (opened) => ({ backend, store, raw } = opened))

    const addUser = (id = newId(), extra: Partial<{ name: string; password: string; apiPassword: string }> = {}) =>
      store.createUser({ id, name: extra.name ?? `Name of ${id}`, password: extra.password ?? `login-${id}`, apiPassword: extra.apiPassword ?? `api-${id}` })

    const addApp = async (ownerId?: string, scopes: Parameters<SqlIdentityStore['createConsumer']>[0]['scopes'] = ['read_public', 'write_public']) =>
      store.createConsumer({ name: 'An app', ownerId: ownerId ?? (await addUser()).id, scopes, callbackUrl: null })

    describe('users', () => {
      it('creates a user and reads it back', async () => {
        const id = newId('Alice')
        const user = await store.createUser({ id, name: '  Alice Liddell  ', password: 'pw-1', apiPassword: 'api-1' })
        expect(user).toEqual({ id, name: 'Alice Liddell', createdAt: expect.any(Date) })
        expect(Math.abs(user.createdAt.getTime() - Date.now())).toBeLessThan(60_000)
        expect(await store.getUser(id)).toEqual(user)
      })

      it('renames a user, raising the name version the core is sent; what the core acknowledged is not sent again', async () => {
        const id = newId('Renamed')
        await addUser(id, { name: 'First' })
        const pending = async () => (await store.usersForCore(100_000)).filter((u) => u.id === id)
        expect(await pending()).toEqual([{ id, name: 'First', version: 1 }])
        await store.coreHasUsers([{ id, name: 'First', version: 1 }])
        expect(await pending()).toEqual([])
        expect(await store.setUserName(id, '  Second  ')).toEqual({ before: 'First', user: { id, name: 'Second', createdAt: expect.any(Date) } })
        expect(await store.getUser(id)).toMatchObject({ name: 'Second' })
        expect(await pending()).toEqual([{ id, name: 'Second', version: 2 }])
        // The same name again raises nothing; an older acknowledgement lowers nothing.
        await store.setUserName(id, 'Second')
        await store.coreHasUsers([{ id, name: 'Second', version: 2 }])
        await store.coreHasUsers([{ id, name: 'First', version: 1 }])
        expect(await pending()).toEqual([])
        expect(await store.setUserName(newId(), 'Nobody')).toBeNull()
        await expect(store.setUserName(id, '   ')).rejects.toThrow(InvalidInput)
        expect(await store.getUser(id)).toMatchObject({ name: 'Second' })
      })

      it('answers null for an unknown or impossible id', async () => {
        expect(await store.getUser(newId())).toBeNull()
        expect(await store.getUser('no')).toBeNull()
        expect(await store.getUser('bad\u0000id')).toBeNull()
      })

      it('refuses a taken id with Conflict, also when only the case differs', async () => {
        const id = newId('Bob')
        await addUser(id)
        await expect(addUser(id)).rejects.toThrow(Conflict)
        await expect(addUser(id.toLowerCase())).rejects.toThrow(Conflict)
        expect(await store.getUser(id.toLowerCase())).toBeNull()
      })

      it('refuses invalid ids, names and passwords, storing nothing', async () => {
        const before = await raw.query<{ n: string }>('SELECT count(*) AS n FROM kigo_gateway.users')
        for (const id of ['ab', '1abc', 'a b c', 'abc!', 'x'.repeat(33), '', 'ａbc', 'abc\n']) {
          await expect(store.createUser({ id, name: 'N', password: 'p', apiPassword: 'a' })).rejects.toThrow(InvalidInput)
        }
        const id = newId()
        for (const bad of [
          { name: '' },
          { name: '   ' },
          { name: 'tab\there' },
          { name: 'x'.repeat(101) },
          { password: '' },
          { apiPassword: '' },
          { password: 'x'.repeat(1025) },
          { apiPassword: 'nul\u0000byte' },
          { apiPassword: 'lone \ud800 surrogate' },
        ]) {
          await expect(store.createUser({ id, name: 'N', password: 'p', apiPassword: 'a', ...bad })).rejects.toThrow(InvalidInput)
        }
        const after = await raw.query<{ n: string }>('SELECT count(*) AS n FROM kigo_gateway.users')
        expect(Number(after[0]!.n)).toBe(Number(before[0]!.n))
        expect(await store.getUser(id)).toBeNull()
      })

      it('verifies the login password: right gives the user, wrong or unknown gives null', async () => {
        const user = await addUser(newId(), { password: 'pä$$wörd 🔑', apiPassword: 'the-api-password' })
        expect(await store.verifyLoginPassword(user.id, 'pä$$wörd 🔑')).toEqual(user)
        expect(await store.verifyLoginPassword(user.id, 'pä$$wörd')).toBeNull()
        expect(await store.verifyLoginPassword(user.id, 'the-api-password')).toBeNull()
        expect(await store.verifyLoginPassword(user.id.toUpperCase(), 'pä$$wörd 🔑')).toBeNull()
        expect(await store.verifyLoginPassword(newId(), 'pä$$wörd 🔑')).toBeNull()
        expect(await store.verifyLoginPassword('!!', 'x')).toBeNull()
      })

      it('spends comparable work on an unknown user as on a known one', async () => {
        const user = await addUser()
        await store.verifyLoginPassword(newId(), 'warm-up')
        const time = async (id: string) => {
          const start = performance.now()
          for (let i = 0; i < 3; i++) await store.verifyLoginPassword(id, 'wrong password')
          return performance.now() - start
        }
        const known = await time(user.id)
        const unknown = await time(newId())
        expect(unknown).toBeGreaterThan(known * 0.5)
      })

      it('returns the API password decrypted, and resets it', async () => {
        const user = await addUser(newId(), { password: 'login-pw', apiPassword: 'api pw ✓' })
        expect(await store.getApiPassword(user.id)).toEqual({ user, apiPassword: 'api pw ✓' })
        expect(await store.setApiPassword(user.id, 'new api pw')).toBe(true)
        expect(await store.getApiPassword(user.id)).toEqual({ user, apiPassword: 'new api pw' })
        // The login password is a separate secret and stays as it was.
        expect(await store.verifyLoginPassword(user.id, 'login-pw')).toEqual(user)
      })

      it('replaces the login password (hashed) and ends the user\'s sessions, all or all but one', async () => {
        const user = await addUser(newId(), { password: 'old-login-pw', apiPassword: 'api-kept' })
        expect(await store.setLoginPassword(user.id, 'new-login-pw')).toBe(true)
        expect(await store.verifyLoginPassword(user.id, 'old-login-pw')).toBeNull()
        expect(await store.verifyLoginPassword(user.id, 'new-login-pw')).toEqual(user)
        expect((await store.getApiPassword(user.id))?.apiPassword).toBe('api-kept')
        expect(await store.setLoginPassword(newId(), 'whatever-pw')).toBe(false)
        const session = () => store.createWebSession({ userId: user.id, now: new Date(), expiresAt: new Date(Date.now() + 60_000) })
        const [a, b, c] = [await session(), await session(), await session()]
        expect(await store.endUserSessions(user.id, b.id)).toBe(2)
        expect(await store.getWebSession(a.id, new Date())).toBeNull()
        expect(await store.getWebSession(b.id, new Date())).not.toBeNull()
        expect(await store.getWebSession(c.id, new Date())).toBeNull()
        expect(await store.endUserSessions(user.id)).toBe(1)
        expect(await store.getWebSession(b.id, new Date())).toBeNull()
      })

      it('answers null / false for the API password of an unknown user, and refuses an empty one', async () => {
        expect(await store.getApiPassword(newId())).toBeNull()
        expect(await store.setApiPassword(newId(), 'whatever')).toBe(false)
        const user = await addUser(newId(), { apiPassword: 'kept' })
        await expect(store.setApiPassword(user.id, '')).rejects.toThrow(InvalidInput)
        expect((await store.getApiPassword(user.id))?.apiPassword).toBe('kept')
      })

      it('names the users whose IDs became reserved, in any case, by ID', async () => {
        expect(await store.usersWithReservedIds()).toEqual([])
        // Such users were made before their IDs were reserved: the store itself refuses them now.
        await expect(addUser('Admin')).rejects.toThrow(InvalidInput)
        const [a, b] = [await addUser(), await addUser()]
        await raw.query('UPDATE kigo_gateway.users SET id = $2 WHERE id = $1', [a.id, 'healthz'])
        await raw.query('UPDATE kigo_gateway.users SET id = $2 WHERE id = $1', [b.id, 'Admin'])
        try {
          expect(await store.usersWithReservedIds()).toEqual(['Admin', 'healthz'])
        } finally {
          await raw.query(`DELETE FROM kigo_gateway.users WHERE id IN ('Admin', 'healthz')`)
        }
        expect(await store.usersWithReservedIds()).toEqual([])
      })
    })

    describe('consumers', () => {
      it('generates a random key and secret and reads them back', async () => {
        const owner = await addUser()
        const { consumer, secret } = await store.createConsumer({
          name: ' My App ',
          ownerId: owner.id,
          scopes: ['write_public', 'read_public', 'write_public'],
          callbackUrl: 'https://app.example/callback?x=1',
        })
        expect(consumer).toEqual({
          key: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/),
          name: 'My App',
          ownerId: owner.id,
          scopes: ['read_public', 'write_public'],
          callbackUrl: 'https://app.example/callback?x=1',
          homeUrl: null,
          createdAt: expect.any(Date),
        })
        expect(secret).toMatch(/^[A-Za-z0-9_-]{32,}$/)
        expect(await store.getConsumer(consumer.key)).toEqual({ consumer, secret })

        const other = await addApp(owner.id)
        expect(other.consumer.key).not.toBe(consumer.key)
        expect(other.secret).not.toBe(secret)
        expect(other.consumer.callbackUrl).toBeNull()
      })

      it('rotates with an overlap: the old secret kept sealed as the previous one until its expiry; a rotation without one forgets it', async () => {
        const { consumer, secret } = await addApp()
        const now = new Date('2027-02-01T12:00:00Z')
        const first = await store.rotateConsumerSecret(consumer.key, { overlapSeconds: 3600, now })
        expect(first).toEqual({ consumer, secret: expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/), previousUntil: new Date('2027-02-01T13:00:00Z') })
        expect(await store.getConsumer(consumer.key)).toEqual({ consumer, secret: first!.secret, previous: { secret, expiresAt: Date.parse('2027-02-01T13:00:00Z') } })
        // Sealed, and bound to its own column: not the current secret's ciphertext, not plain.
        const [row] = await raw.query<{ secret: string; previous_secret: string }>('SELECT secret, previous_secret FROM kigo_gateway.consumers WHERE key = $1', [consumer.key])
        expect(row!.previous_secret).toMatch(/^v1\./)
        expect(row!.previous_secret).not.toContain(secret)
        await raw.query('UPDATE kigo_gateway.consumers SET previous_secret = secret WHERE key = $1', [consumer.key])
        // Moved from another column, it is refused when it is read (and only then: an expired one never is).
        const moved = await store.getConsumer(consumer.key)
        expect(() => moved?.previous?.secret).toThrow(UnreadableSecret)
        await raw.query('UPDATE kigo_gateway.consumers SET previous_secret = $2 WHERE key = $1', [consumer.key, row!.previous_secret])

        // A second rotation with an overlap replaces the previous secret with the one it replaced.
        const second = await store.rotateConsumerSecret(consumer.key, { overlapSeconds: 604800, now })
        expect((await store.getConsumer(consumer.key))?.previous).toEqual({ secret: first!.secret, expiresAt: Date.parse('2027-02-08T12:00:00Z') })
        // Without one, none is kept.
        const third = await store.rotateConsumerSecret(consumer.key)
        expect(third?.previousUntil).toBeNull()
        expect(await store.getConsumer(consumer.key)).toEqual({ consumer, secret: third!.secret })
        expect(second!.secret).not.toBe(third!.secret)
        expect(await store.rotateConsumerSecret(randomBytes(18).toString('base64url'), { overlapSeconds: 3600 })).toBeNull()
      })

      it('answers null for an unknown key', async () => {
        expect(await store.getConsumer(randomBytes(18).toString('base64url'))).toBeNull()
        expect(await store.getConsumer('short')).toBeNull()
        expect(await store.getConsumer('k\u0000'.repeat(20))).toBeNull()
      })

      it('refuses an unknown owner with NotFound', async () => {
        await expect(store.createConsumer({ name: 'App', ownerId: newId(), scopes: ['read_public'], callbackUrl: null })).rejects.toThrow(NotFound)
      })

      it('refuses bad names, scopes and callback URLs', async () => {
        const owner = await addUser()
        const base = { name: 'App', ownerId: owner.id, scopes: ['read_public'] as const, callbackUrl: null }
        for (const bad of [
          { name: '' },
          { scopes: [] },
          { scopes: ['read_public', 'admin'] },
          { callbackUrl: 'javascript:alert(1)' },
          { callbackUrl: 'ftp://files.example/' },
          { callbackUrl: 'not a url' },
          { callbackUrl: 'https://user:pw@app.example/' },
          { callbackUrl: `https://app.example/${'x'.repeat(2048)}` },
        ]) {
          await expect(store.createConsumer({ ...base, scopes: [...base.scopes], ...bad } as never)).rejects.toThrow(InvalidInput)
        }
        expect(await store.listConsumers(owner.id)).toEqual([])
      })

      it('edits the name, callback and home page as a registration checks them, returning before and after', async () => {
        const owner = await addUser()
        const { consumer, secret } = await addApp(owner.id)
        const edited = await store.updateConsumer(consumer.key, { name: ' Renamed ', callbackUrl: 'https://new.example/cb', homeUrl: 'https://new.example/' })
        expect(edited).toEqual({ before: consumer, after: { ...consumer, name: 'Renamed', callbackUrl: 'https://new.example/cb', homeUrl: 'https://new.example/' } })
        expect(await store.getConsumer(consumer.key)).toEqual({ consumer: edited!.after, secret })
        for (const bad of [{ name: '' }, { callbackUrl: 'ftp://files.example/' }, { homeUrl: 'javascript:alert(1)' }, { homeUrl: 'https://user:pw@new.example/' }]) {
          await expect(store.updateConsumer(consumer.key, { name: 'Again', callbackUrl: null, homeUrl: null, ...bad })).rejects.toThrow(InvalidInput)
        }
        expect((await store.getConsumer(consumer.key))!.consumer).toEqual(edited!.after)
        expect(await store.updateConsumer(randomBytes(18).toString('base64url'), { name: 'X', callbackUrl: null, homeUrl: null })).toBeNull()
      })

      it('lists consumers, all or by owner, oldest first', async () => {
        const a = await addUser()
        const b = await addUser()
        const a1 = await addApp(a.id)
        const b1 = await addApp(b.id)
        const a2 = await addApp(a.id)
        expect(await store.listConsumers(a.id)).toEqual([a1.consumer, a2.consumer])
        expect(await store.listConsumers(b.id)).toEqual([b1.consumer])
        expect(await store.listConsumers(newId())).toEqual([])
        const all = (await store.listConsumers()).map((c) => c.key)
        expect(all).toEqual(expect.arrayContaining([a1.consumer.key, a2.consumer.key, b1.consumer.key]))
        expect(all.indexOf(a1.consumer.key)).toBeLessThan(all.indexOf(a2.consumer.key))
      })
    })

    describe('access tokens', () => {
      it('generates a random token and secret and reads them back', async () => {
        const user = await addUser()
        const app = await addApp(undefined, ['read_public', 'write_public', 'write_private'])
        const { token, secret } = await store.createAccessToken({
          consumerKey: app.consumer.key,
          userId: user.id,
          scopes: ['write_private', 'read_public'],
        })
        expect(token).toEqual({
          token: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/),
          consumerKey: app.consumer.key,
          userId: user.id,
          scopes: ['read_public', 'write_private'],
          createdAt: expect.any(Date),
          revokedAt: null,
        })
        expect(secret).toMatch(/^[A-Za-z0-9_-]{32,}$/)
        expect(secret).not.toBe(app.secret)
        expect(await store.getAccessToken(token.token)).toEqual({ token, secret })
        expect(await store.getAccessToken(randomBytes(24).toString('base64url'))).toBeNull()
      })

      it('refuses an unknown consumer or user with NotFound, and scopes beyond the application', async () => {
        const user = await addUser()
        const app = await addApp(undefined, ['read_public'])
        const unknownKey = randomBytes(18).toString('base64url')
        await expect(store.createAccessToken({ consumerKey: unknownKey, userId: user.id, scopes: ['read_public'] })).rejects.toThrow(NotFound)
        await expect(store.createAccessToken({ consumerKey: app.consumer.key, userId: newId(), scopes: ['read_public'] })).rejects.toThrow(NotFound)
        await expect(store.createAccessToken({ consumerKey: app.consumer.key, userId: user.id, scopes: ['write_public'] })).rejects.toThrow(InvalidInput)
        await expect(store.createAccessToken({ consumerKey: app.consumer.key, userId: user.id, scopes: ['nope' as never] })).rejects.toThrow(InvalidInput)
        expect(await store.listAccessTokens({ userId: user.id })).toEqual([])
      })

      it('revokes a token, which keeps existing with revokedAt', async () => {
        const user = await addUser()
        const app = await addApp()
        const { token, secret } = await store.createAccessToken({ consumerKey: app.consumer.key, userId: user.id, scopes: ['read_public'] })
        expect(await store.revokeAccessToken(token.token)).toBe(true)
        const revoked = await store.getAccessToken(token.token)
        expect(revoked).toEqual({ token: { ...token, revokedAt: expect.any(Date) }, secret })
        const revokedAt = revoked!.token.revokedAt!
        expect(revokedAt.getTime()).toBeGreaterThanOrEqual(token.createdAt.getTime())
        // Revoking twice succeeds and keeps the first time.
        expect(await store.revokeAccessToken(token.token)).toBe(true)
        expect((await store.getAccessToken(token.token))!.token.revokedAt).toEqual(revokedAt)
        expect(await store.listAccessTokens({ userId: user.id })).toEqual([revoked!.token])
        expect(await store.revokeAccessToken(randomBytes(24).toString('base64url'))).toBe(false)
        expect(await store.revokeAccessToken('')).toBe(false)
      })

      it('lists tokens by user, by consumer, by both, or all', async () => {
        const u1 = await addUser()
        const u2 = await addUser()
        const c1 = await addApp()
        const c2 = await addApp()
        const issue = (consumerKey: string, userId: string) =>
          store.createAccessToken({ consumerKey, userId, scopes: ['read_public'] }).then((t) => t.token)
        const t11 = await issue(c1.consumer.key, u1.id)
        const t21 = await issue(c2.consumer.key, u1.id)
        const t12 = await issue(c1.consumer.key, u2.id)
        expect(await store.listAccessTokens({ userId: u1.id })).toEqual([t11, t21])
        expect(await store.listAccessTokens({ consumerKey: c1.consumer.key })).toEqual([t11, t12])
        expect(await store.listAccessTokens({ userId: u2.id, consumerKey: c1.consumer.key })).toEqual([t12])
        expect(await store.listAccessTokens({ userId: u2.id, consumerKey: c2.consumer.key })).toEqual([])
        expect(await store.listAccessTokens({ userId: newId() })).toEqual([])
        const all = (await store.listAccessTokens({})).map((t) => t.token)
        expect(all).toEqual(expect.arrayContaining([t11.token, t21.token, t12.token]))
      })
    })

    describe('secrets at rest', () => {
      it('stores no password or secret in plain text anywhere in the schema', async () => {
        const password = `login ${randomBytes(9).toString('base64url')}`
        const apiPassword = `api ${randomBytes(9).toString('base64url')}`
        const user = await addUser(newId(), { password, apiPassword })
        const resetApiPassword = `reset ${randomBytes(9).toString('base64url')}`
        await store.setApiPassword(user.id, resetApiPassword)
        const app = await addApp(user.id)
        const { secret: tokenSecret } = await store.createAccessToken({ consumerKey: app.consumer.key, userId: user.id, scopes: ['read_public'] })
        const secrets = [password, apiPassword, resetApiPassword, app.secret, tokenSecret]

        const tables = await raw.query<{ table_name: string }>(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = 'kigo_gateway' AND table_type = 'BASE TABLE'`,
        )
        expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['users', 'consumers', 'access_tokens']))
        let rowsSeen = 0
        for (const { table_name } of tables) {
          const rows = await raw.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM kigo_gateway.${table_name} t`)
          rowsSeen += rows.length
          for (const { row } of rows) for (const secret of secrets) expect(row).not.toContain(secret)
        }
        expect(rowsSeen).toBeGreaterThan(3)

        const [stored] = await raw.query<{ password_hash: string; api_password: string }>(
          'SELECT password_hash, api_password FROM kigo_gateway.users WHERE id = $1',
          [user.id],
        )
        expect(stored!.password_hash).toMatch(/^\$scrypt\$/)
        expect(stored!.api_password).toMatch(/^v1\./)
      })

      it('refuses a ciphertext moved to another row', async () => {
        const a = await addUser()
        const b = await addUser()
        await raw.query('UPDATE kigo_gateway.users SET api_password = (SELECT api_password FROM kigo_gateway.users WHERE id = $2) WHERE id = $1', [a.id, b.id])
        await expect(store.getApiPassword(a.id)).rejects.toThrow(UnreadableSecret)
        expect((await store.getApiPassword(b.id))?.apiPassword).toBe(`api-${b.id}`)

        const c1 = await addApp(a.id)
        const c2 = await addApp(a.id)
        await raw.query('UPDATE kigo_gateway.consumers SET secret = (SELECT secret FROM kigo_gateway.consumers WHERE key = $2) WHERE key = $1', [c1.consumer.key, c2.consumer.key])
        await expect(store.getConsumer(c1.consumer.key)).rejects.toThrow(UnreadableSecret)

        const t1 = await store.createAccessToken({ consumerKey: c2.consumer.key, userId: b.id, scopes: ['read_public'] })
        const t2 = await store.createAccessToken({ consumerKey: c2.consumer.key, userId: b.id, scopes: ['read_public'] })
        await raw.query('UPDATE kigo_gateway.access_tokens SET secret = (SELECT secret FROM kigo_gateway.access_tokens WHERE token = $2) WHERE token = $1', [t1.token.token, t2.token.token])
        await expect(store.getAccessToken(t1.token.token)).rejects.toThrow(UnreadableSecret)
        // A consumer secret moved into a token row does not open either.
        await raw.query('UPDATE kigo_gateway.access_tokens SET secret = (SELECT secret FROM kigo_gateway.consumers WHERE key = $2) WHERE token = $1', [t2.token.token, c2.consumer.key])
        await expect(store.getAccessToken(t2.token.token)).rejects.toThrow(UnreadableSecret)
      })

      it('keeps everything across a reopen, and a different master key cannot read the secrets', async () => {
        const user = await addUser(newId(), { password: 'durable-login', apiPassword: 'durable-api' })
        const app = await addApp(user.id)
        const again = await openIdentityStore(backend.options)
        try {
          expect(await again.verifyLoginPassword(user.id, 'durable-login')).toEqual(user)
          expect((await again.getApiPassword(user.id))?.apiPassword).toBe('durable-api')
          expect(await again.getConsumer(app.consumer.key)).toEqual(app)
        } finally {
          await again.close()
        }
        const otherKey = await openIdentityStore({ ...backend.options, secretKey: randomBytes(32).toString('base64') })
        try {
          await expect(otherKey.getApiPassword(user.id)).rejects.toThrow(UnreadableSecret)
          // Hashes need no key: the login password still verifies.
          expect(await otherKey.verifyLoginPassword(user.id, 'durable-login')).toEqual(user)
        } finally {
          await otherKey.close()
        }
      })
    })

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined()
    })
  })
}
