// The identity store's contract for the OAuth provider and the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// request tokens, verifiers, web sessions, authorized applications. Run once per
// backend: the embedded database, and PostgreSQL (skipped with a reason when absent
// outside CI).
import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Db } from '../../../src/common/sql.js'
import {
  InvalidInput,
  NotFound,
  type IdentityChange,
  type SqlIdentityStore,
} from '../../../src/gateway/store/index.js'
import type { Scope } from '../../../src/gateway/domain/identifiers.js'
import { identityStoreBackends, openIdentityStoreForSuite } from '../../helpers/backends.js'

const backends = await identityStoreBackends('provider-store')

let serial = 0
const newId = (prefix = 'user') => `${prefix}_${++serial}_${randomBytes(3).toString('hex')}`
const minutes = (n: number) => n * 60_000

for (const { name, setup } of backends) {
  describe.skipIf(setup === null)(`provider store contract (${name})`, () => {
    let store: SqlIdentityStore
    let raw: Db
    openIdentityStoreForSuite(setup!, (opened) => ({ store, raw } = opened))

    const addUser = async (id = newId()) => store.createUser({ id, name: `Name of ${id}`, password: `login-${id}`, apiPassword: `api-${id}` })
    const addApp = async (ownerId: string, scopes: Scope[] = ['read_public', 'write_public'], appName = 'An app') =>
      (await store.createConsumer({ name: appName, ownerId, scopes, callbackUrl: null })).consumer

    /** A pending request token issued at `now` that expires ten minutes later. */
    const issue = async (consumerKey: string, scopes: Scope[] = ['read_public'], now = new Date(), callback = 'oob') =>
      store.createRequestToken({ consumerKey, callback, scopes, now, expiresAt: new Date(now.getTime() + minutes(10)) })

    describe('request tokens', () => {
      it('issues a pending token with a secret and reads it back', async () => {
        const owner = await addUser()
        const app = await addApp(owner.id)
        const now = new Date()
        const { requestToken, secret } = await issue(app.key, ['write_public', 'read_public'], now, 'https://client.example/cb?x=1')
        expect(requestToken).toEqual({
          token: expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/),
          consumerKey: app.key,
          callback: 'https://client.example/cb?x=1',
          scopes: ['read_public', 'write_public'],
          state: 'pending',
          userId: null,
          createdAt: now,
          expiresAt: new Date(now.getTime() + minutes(10)),
        })
        expect(secret.length).toBeGreaterThanOrEqual(32)
        expect(await store.getRequestToken(requestToken.token)).toEqual({ requestToken, secret })
      })

      it('keeps the secret sealed at rest', async () => {
        const app = await addApp((await addUser()).id)
        const { requestToken, secret } = await issue(app.key)
        const rows = await raw.query<{ secret: string }>('SELECT secret FROM kigo_gateway.request_tokens WHERE token = $1', [requestToken.token])
        expect(rows[0]!.secret).not.toContain(secret)
      })

      it('refuses an unknown consumer and scopes the application did not register', async () => {
        const app = await addApp((await addUser()).id, ['read_public'])
        await expect(issue('unknown-consumer-key-000')).rejects.toThrow(NotFound)
        await expect(issue(app.key, ['write_public'])).rejects.toThrow(InvalidInput)
        await expect(issue(app.key, [])).rejects.toThrow(InvalidInput)
      })

      it('answers null for an unknown or impossible token', async () => {
        expect(await store.getRequestToken(randomBytes(24).toString('base64url'))).toBeNull()
        expect(await store.getRequestToken("x' OR 1=1 --")).toBeNull()
      })

      it('is approved once, with a verifier, and exchanged once for an access token with its scopes', async () => {
        const user = await addUser()
        const app = await addApp((await addUser()).id)
        const { requestToken } = await issue(app.key, ['read_public', 'write_public'])
        const now = new Date()
        const approval = await store.approveRequestToken(requestToken.token, user.id, now)
        expect(approval?.verifier).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/)
        // A second decision does nothing: the first one stands.
        expect(await store.approveRequestToken(requestToken.token, user.id, now)).toBeNull()
        expect(await store.denyRequestToken(requestToken.token, user.id, now)).toBe(false)
        expect((await store.getRequestToken(requestToken.token))!.requestToken).toMatchObject({ state: 'approved', userId: user.id })

        const changes: IdentityChange[] = []
        const off = store.onChange((c) => changes.push(c))
        const exchanged = await store.exchangeRequestToken(requestToken.token, approval!.verifier, now)
        off()
        expect(exchanged.ok).toBe(true)
        if (!exchanged.ok) return
        expect(exchanged.token).toMatchObject({ consumerKey: app.key, userId: user.id, scopes: ['read_public', 'write_public'], revokedAt: null })
        expect(changes).toEqual([{ kind: 'token', token: exchanged.token.token }])
        const stored = await store.getAccessToken(exchanged.token.token)
        expect(stored?.secret).toBe(exchanged.secret)

        expect(await store.exchangeRequestToken(requestToken.token, approval!.verifier, now)).toEqual({ ok: false, reason: 'used' })
        expect((await store.getRequestToken(requestToken.token))!.requestToken.state).toBe('used')
      })

      it('stores only a hash of the verifier', async () => {
        const user = await addUser()
        const app = await addApp(user.id)
        const { requestToken } = await issue(app.key)
        const { verifier } = (await store.approveRequestToken(requestToken.token, user.id, new Date()))!
        const rows = await raw.query<{ verifier_hash: string }>('SELECT verifier_hash FROM kigo_gateway.request_tokens WHERE token = $1', [requestToken.token])
        expect(rows[0]!.verifier_hash).not.toContain(verifier)
        expect(rows[0]!.verifier_hash).toBe(createHash('sha256').update(verifier).digest('hex'))
      })

      it('refuses a wrong verifier without using up the token', async () => {
        const user = await addUser()
        const app = await addApp(user.id)
        const { requestToken } = await issue(app.key)
        const { verifier } = (await store.approveRequestToken(requestToken.token, user.id, new Date()))!
        expect(await store.exchangeRequestToken(requestToken.token, verifier + 'x', new Date())).toEqual({ ok: false, reason: 'verifier_mismatch' })
        expect(await store.exchangeRequestToken(requestToken.token, '', new Date())).toEqual({ ok: false, reason: 'verifier_mismatch' })
        expect((await store.exchangeRequestToken(requestToken.token, verifier, new Date())).ok).toBe(true)
      })

      it('accepts the verifier typed in lower case, with spaces or a dash', async () => {
        const user = await addUser()
        const app = await addApp(user.id)
        const { requestToken } = await issue(app.key)
        const { verifier } = (await store.approveRequestToken(requestToken.token, user.id, new Date()))!
        const typed = ` ${verifier.slice(0, 4).toLowerCase()}-${verifier.slice(4)} `
        expect((await store.exchangeRequestToken(requestToken.token, typed, new Date())).ok).toBe(true)
      })

      it('refuses to exchange a pending, denied, unknown or expired token', async () => {
        const user = await addUser()
        const app = await addApp(user.id)
        const pending = (await issue(app.key)).requestToken
        expect(await store.exchangeRequestToken(pending.token, 'anything', new Date())).toEqual({ ok: false, reason: 'pending' })

        const denied = (await issue(app.key)).requestToken
        expect(await store.denyRequestToken(denied.token, user.id, new Date())).toBe(true)
        expect((await store.getRequestToken(denied.token))!.requestToken).toMatchObject({ state: 'denied', userId: user.id })
        expect(await store.approveRequestToken(denied.token, user.id, new Date())).toBeNull()
        expect(await store.exchangeRequestToken(denied.token, 'anything', new Date())).toEqual({ ok: false, reason: 'denied' })

        expect(await store.exchangeRequestToken(randomBytes(24).toString('base64url'), 'v', new Date())).toEqual({ ok: false, reason: 'unknown' })

        const issuedAt = new Date()
        const approved = (await issue(app.key, ['read_public'], issuedAt)).requestToken
        const { verifier } = (await store.approveRequestToken(approved.token, user.id, issuedAt))!
        const later = new Date(issuedAt.getTime() + minutes(10) + 1000)
        expect(await store.exchangeRequestToken(approved.token, verifier, later)).toEqual({ ok: false, reason: 'expired' })
      })

      it('cannot be decided after it expired', async () => {
        const user = await addUser()
        const app = await addApp(user.id)
        const issuedAt = new Date()
        const { requestToken } = await issue(app.key, ['read_public'], issuedAt)
        const later = new Date(issuedAt.getTime() + minutes(11))
        expect(await store.approveRequestToken(requestToken.token, user.id, later)).toBeNull()
        expect(await store.denyRequestToken(requestToken.token, user.id, later)).toBe(false)
        expect((await store.getRequestToken(requestToken.token))!.requestToken.state).toBe('pending')
      })

      it('gives exactly one access token to concurrent exchanges', async () => {
        const user = await addUser()
        const app = await addApp(user.id)
        const { requestToken } = await issue(app.key)
        const { verifier } = (await store.approveRequestToken(requestToken.token, user.id, new Date()))!
        const results = await Promise.all(Array.from({ length: 6 }, () => store.exchangeRequestToken(requestToken.token, verifier, new Date())))
        expect(results.filter((r) => r.ok)).toHaveLength(1)
        expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(Array(5).fill('used'))
        expect(await store.listAccessTokens({ userId: user.id, consumerKey: app.key })).toHaveLength(1)
      })

      it('forgets tokens a day after they expired, when new ones are issued', async () => {
        const app = await addApp((await addUser()).id)
        const long = new Date(Date.now() - 2 * 24 * 60 * 60_000)
        const old = (await issue(app.key, ['read_public'], long)).requestToken
        const recent = (await issue(app.key, ['read_public'], new Date(Date.now() - minutes(30)))).requestToken
        await issue(app.key)
        expect(await store.getRequestToken(old.token)).toBeNull()
        expect(await store.getRequestToken(recent.token)).not.toBeNull()
      })
    })

    describe('web sessions', () => {
      it('creates a session for a user and finds it by its id until it expires', async () => {
        const user = await addUser()
        const now = new Date()
        const expiresAt = new Date(now.getTime() + minutes(60))
        const { id, csrfToken } = await store.createWebSession({ userId: user.id, expiresAt, now })
        expect(id).toMatch(/^[A-Za-z0-9_-]{40,}$/)
        expect(csrfToken).toMatch(/^[A-Za-z0-9_-]{40,}$/)
        expect(await store.getWebSession(id, now)).toEqual({ user, csrfToken, createdAt: now, expiresAt })
        expect(await store.getWebSession(id, new Date(expiresAt.getTime() + 1))).toBeNull()
        expect(await store.getWebSession(id + 'x', now)).toBeNull()
      })

      it('creates a signed-out session that carries only a CSRF token', async () => {
        const now = new Date()
        const { id, csrfToken } = await store.createWebSession({ userId: null, expiresAt: new Date(now.getTime() + minutes(5)), now })
        expect(await store.getWebSession(id, now)).toMatchObject({ user: null, csrfToken })
      })

      it('stores neither the session id nor the CSRF token in plain text', async () => {
        const user = await addUser()
        const now = new Date()
        const { id, csrfToken } = await store.createWebSession({ userId: user.id, expiresAt: new Date(now.getTime() + minutes(5)), now })
        const rows = await raw.query<Record<string, unknown>>('SELECT * FROM kigo_gateway.web_sessions WHERE user_id = $1', [user.id])
        expect(rows).toHaveLength(1)
        const dump = JSON.stringify(rows)
        expect(dump).not.toContain(id)
        expect(dump).not.toContain(csrfToken)
      })

      it('deletes a session (sign-out) and refuses an unknown user', async () => {
        const user = await addUser()
        const now = new Date()
        const { id } = await store.createWebSession({ userId: user.id, expiresAt: new Date(now.getTime() + minutes(5)), now })
        await store.deleteWebSession(id)
        expect(await store.getWebSession(id, now)).toBeNull()
        await store.deleteWebSession('not a session id')
        await expect(store.createWebSession({ userId: newId(), expiresAt: new Date(now.getTime() + minutes(5)), now })).rejects.toThrow(NotFound)
      })

      it('holds a new secret beside a session, sealed, for one read of its slot before it expires', async () => {
        const user = await addUser()
        const now = new Date()
        const later = new Date(now.getTime() + minutes(10))
        const mine = await store.createWebSession({ userId: user.id, expiresAt: new Date(now.getTime() + minutes(60)), now })
        const theirs = await store.createWebSession({ userId: (await addUser()).id, expiresAt: new Date(now.getTime() + minutes(60)), now })
        const value = `{"secret":"held-${randomBytes(8).toString('hex')}"}`
        await store.holdShownSecret(mine.id, 'app:one', value, later)
        const rows = await raw.query<Record<string, unknown>>('SELECT * FROM kigo_gateway.web_sessions WHERE user_id = $1', [user.id])
        expect(JSON.stringify(rows)).not.toContain(value.slice(11, 30))
        // Another session, another slot: nothing, and what is held stays.
        expect(await store.takeShownSecret(theirs.id, 'app:one', now)).toBeNull()
        expect(await store.takeShownSecret(mine.id, 'app:two', now)).toBeNull()
        expect(await store.takeShownSecret(mine.id, 'app:one', now)).toBe(value)
        expect(await store.takeShownSecret(mine.id, 'app:one', now)).toBeNull()
        // Too late: cleared and not given.
        await store.holdShownSecret(mine.id, 'app:one', value, later)
        expect(await store.takeShownSecret(mine.id, 'app:one', later)).toBeNull()
        expect(await store.takeShownSecret(mine.id, 'app:one', now)).toBeNull()
        // A later hold replaces the earlier one.
        await store.holdShownSecret(mine.id, 'app:one', '"first"', later)
        await store.holdShownSecret(mine.id, 'app:two', '"second"', later)
        expect(await store.takeShownSecret(mine.id, 'app:one', now)).toBeNull()
        expect(await store.takeShownSecret(mine.id, 'app:two', now)).toBe('"second"')
      })

      it('drops expired sessions when new ones are created', async () => {
        const user = await addUser()
        const then = new Date(Date.now() - minutes(120))
        await store.createWebSession({ userId: user.id, expiresAt: new Date(then.getTime() + minutes(5)), now: then })
        await store.createWebSession({ userId: null, expiresAt: new Date(Date.now() + minutes(5)), now: new Date() })
        const rows = await raw.query('SELECT 1 FROM kigo_gateway.web_sessions WHERE user_id = $1', [user.id])
        expect(rows).toHaveLength(0)
      })
    })

    describe('authorized applications', () => {
      it('lists the applications holding unrevoked tokens of the user, with their scopes, and revokes them per application', async () => {
        const user = await addUser()
        const other = await addUser()
        const owner = await addUser()
        const writer = await addApp(owner.id, ['read_public', 'write_public', 'write_private'], 'Writer')
        const reader = await addApp(owner.id, ['read_public'], 'Reader')
        const unused = await addApp(owner.id, ['read_public'], 'Unused')
        const w1 = await store.createAccessToken({ consumerKey: writer.key, userId: user.id, scopes: ['write_public'] })
        const w2 = await store.createAccessToken({ consumerKey: writer.key, userId: user.id, scopes: ['read_public', 'write_private'] })
        await store.createAccessToken({ consumerKey: reader.key, userId: user.id, scopes: ['read_public'] })
        const others = await store.createAccessToken({ consumerKey: writer.key, userId: other.id, scopes: ['write_public'] })
        const revoked = await store.createAccessToken({ consumerKey: unused.key, userId: user.id, scopes: ['read_public'] })
        await store.revokeAccessToken(revoked.token.token)

        const listed = await store.listAuthorizedApplications(user.id)
        expect(listed.map((a) => [a.consumer.name, a.scopes, a.tokens])).toEqual([
          ['Writer', ['read_public', 'write_public', 'write_private'], 2],
          ['Reader', ['read_public'], 1],
        ])
        expect(listed[0]!.authorizedAt).toEqual(w1.token.createdAt)

        const changes: IdentityChange[] = []
        const off = store.onChange((c) => changes.push(c))
        expect(await store.revokeUserTokensForConsumer(user.id, writer.key)).toBe(2)
        off()
        expect(changes.map((c) => c.kind === 'token' && c.token).sort()).toEqual([w1.token.token, w2.token.token].sort())
        expect((await store.getAccessToken(w1.token.token))!.token.revokedAt).toBeInstanceOf(Date)
        expect((await store.getAccessToken(others.token.token))!.token.revokedAt).toBeNull()
        expect((await store.listAuthorizedApplications(user.id)).map((a) => a.consumer.name)).toEqual(['Reader'])
        expect(await store.revokeUserTokensForConsumer(user.id, writer.key)).toBe(0)
        expect(await store.revokeUserTokensForConsumer('no', writer.key)).toBe(0)
      })

      it('counts the people holding an unrevoked token of an application, each once', async () => {
        const owner = await addUser()
        const app = await addApp(owner.id, ['read_public'])
        expect(await store.countApplicationUsers(app.key)).toBe(0)
        const [a, b, c] = [await addUser(), await addUser(), await addUser()]
        for (const user of [a, a, b]) await store.createAccessToken({ consumerKey: app.key, userId: user.id, scopes: ['read_public'] })
        const gone = await store.createAccessToken({ consumerKey: app.key, userId: c.id, scopes: ['read_public'] })
        await store.revokeAccessToken(gone.token.token)
        await store.createAccessToken({ consumerKey: (await addApp(owner.id, ['read_public'])).key, userId: c.id, scopes: ['read_public'] })
        expect(await store.countApplicationUsers(app.key)).toBe(2)
        await store.revokeUserTokensForConsumer(a.id, app.key)
        expect(await store.countApplicationUsers(app.key)).toBe(1)
        expect(await store.countApplicationUsers('no such key at all')).toBe(0)
      })

      it('lists the consumers an owner registered', async () => {
        const owner = await addUser()
        const a = await addApp(owner.id, ['read_public'], 'First')
        const b = await addApp(owner.id, ['write_public'], 'Second')
        await addApp((await addUser()).id)
        // In the order registered (by registration time, then by key). Two registrations
        // can share a timestamp at the millisecond a Date holds (the embedded engine's
        // clock is coarse): then only the set and the times' order can be checked.
        const listed = await store.listConsumers(owner.id)
        expect(listed.map((c) => c.key).sort()).toEqual([a.key, b.key].sort())
        expect(listed[0]!.createdAt.getTime()).toBeLessThanOrEqual(listed[1]!.createdAt.getTime())
        if (a.createdAt.getTime() < b.createdAt.getTime()) expect(listed.map((c) => c.key)).toEqual([a.key, b.key])
      })
    })
  })
}
