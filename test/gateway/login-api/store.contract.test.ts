// The login API's cert store on the embedded database and on PostgreSQL: issuing a cert is
// one insert (a flood of sign-ins runs no deletes), and the timed sweep deletes certs
// expired for more than a day, and nothing else. A site is edited as it is registered. A
// rotation with an overlap keeps the old secret sealed as the previous one until its expiry.
import { randomBytes } from 'node:crypto'
import { UnreadableSecret } from '../../../src/gateway/store/crypto.js'
import { expect, it } from 'vitest'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'
import { LoginSiteStore } from '../../../src/gateway/login-api/store.js'
import { InvalidInput } from '../../../src/gateway/store/validation.js'

describeBackends('LoginSiteStore certs', await gatewayDbBackends('login-certs'), (current) => {
  it('a sign-in leaves old certs alone; the sweep deletes those expired a day ago', async () => {
    const db = current().db
    await db.query("INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('alice', 'Alice', 'x', 'x')")
    const store = new LoginSiteStore(db, randomBytes(32).toString('base64'))
    const { site } = await store.create({ name: 'Blog', ownerId: 'alice', callbackUrl: 'https://blog.example/cb' })
    const t0 = Date.parse('2027-01-01T00:00:00Z')
    const old = await store.issueCert(site.apiKey, 'alice', t0, 600)
    const twoDays = t0 + 2 * 86_400_000
    const fresh = await store.issueCert(site.apiKey, 'alice', twoDays, 600)
    // Still there after another sign-in: it reads as expired, not unknown.
    expect(await store.redeemCert(site.apiKey, old, twoDays)).toEqual({ problem: 'expired' })
    expect(await store.sweepCerts(twoDays)).toBe(1)
    expect(await store.redeemCert(site.apiKey, old, twoDays)).toEqual({ problem: 'unknown' })
    // A cert expired less than a day ago, and a live one, are kept.
    expect(await store.sweepCerts(twoDays + 600_000 + 3_600_000)).toBe(0)
    expect(await store.redeemCert(site.apiKey, fresh, twoDays + 1000)).toEqual({ userId: 'alice' })
  })

  it('edits the name, callback and home page of a site as a registration checks them, returning before and after', async () => {
    const db = current().db
    await db.query("INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('bea', 'Bea', 'x', 'x')")
    const store = new LoginSiteStore(db, randomBytes(32).toString('base64'))
    const { site, secret } = await store.create({ name: 'Blog', ownerId: 'bea', callbackUrl: 'https://blog.example/cb' })
    expect(site.homeUrl).toBeNull()
    const edited = await store.update(site.apiKey, { name: ' Diary ', callbackUrl: 'https://diary.example/cb', homeUrl: 'https://diary.example/' })
    expect(edited).toEqual({ before: site, after: { ...site, name: 'Diary', callbackUrl: 'https://diary.example/cb', homeUrl: 'https://diary.example/' } })
    for (const bad of [{ name: '' }, { callbackUrl: '' }, { callbackUrl: 'ftp://diary.example/' }, { homeUrl: 'javascript:alert(1)' }]) {
      await expect(store.update(site.apiKey, { name: 'Again', callbackUrl: 'https://again.example/cb', homeUrl: null, ...bad })).rejects.toThrow(InvalidInput)
    }
    expect(await store.get(site.apiKey)).toEqual({ site: edited!.after, secret })
    expect(await store.update(randomBytes(18).toString('base64url'), { name: 'X', callbackUrl: 'https://x.example/cb', homeUrl: null })).toBeNull()
  })

  it('rotates the secret with an overlap: the old one kept sealed until its expiry, replaced by the next rotation, forgotten without one', async () => {
    const db = current().db
    await db.query("INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('bob', 'Bob', 'x', 'x') ON CONFLICT DO NOTHING")
    const store = new LoginSiteStore(db, randomBytes(32).toString('base64'))
    const { site, secret } = await store.create({ name: 'Shop', ownerId: 'bob', callbackUrl: 'https://shop.example/cb' })
    const t0 = Date.parse('2027-01-01T00:00:00Z')
    const first = await store.rotateSecret(site.apiKey, { overlapSeconds: 86400, now: t0 })
    expect(first).toEqual({ site, secret: expect.any(String), previousUntil: new Date(t0 + 86_400_000) })
    expect(await store.get(site.apiKey)).toEqual({ site, secret: first!.secret, previous: { secret, expiresAt: t0 + 86_400_000 } })
    const [row] = await db.query<{ previous_secret: string }>('SELECT previous_secret FROM kigo_gateway.login_sites WHERE api_key = $1', [site.apiKey])
    expect(row!.previous_secret).toMatch(/^v1\./)
    expect(row!.previous_secret).not.toContain(secret)
    await db.query('UPDATE kigo_gateway.login_sites SET previous_secret = secret WHERE api_key = $1', [site.apiKey])
    // Moved from another column, it is refused when it is read (and only then: an expired one never is).
    const moved = await store.get(site.apiKey)
    expect(() => moved?.previous?.secret).toThrow(UnreadableSecret)
    await db.query('UPDATE kigo_gateway.login_sites SET previous_secret = $2 WHERE api_key = $1', [site.apiKey, row!.previous_secret])

    await store.rotateSecret(site.apiKey, { overlapSeconds: 3600, now: t0 + 1000 })
    expect((await store.get(site.apiKey))?.previous).toEqual({ secret: first!.secret, expiresAt: t0 + 1000 + 3_600_000 })
    const last = await store.rotateSecret(site.apiKey, { overlapSeconds: 0, now: t0 + 2000 })
    expect(await store.get(site.apiKey)).toEqual({ site, secret: last!.secret })
    expect(await store.rotateSecret('no-such-site-key-at-all', { overlapSeconds: 3600 })).toBeNull()
  })
})
