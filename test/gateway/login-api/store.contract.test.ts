// The login API's cert store on the embedded database and on PostgreSQL: issuing a cert is
// one insert (a flood of sign-ins runs no deletes), and the timed sweep deletes certs
// expired for more than a day, and nothing else. A site is edited as it is registered.
import { randomBytes } from 'node:crypto'
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
})
