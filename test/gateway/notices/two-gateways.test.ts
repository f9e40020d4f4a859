// Migration notices in production mode (docs/gateway.md#migration-notices): two gateways
// of one deployment on one PostgreSQL database, both running the notices' pass and the
// outbox's sender on their own timers. Every user due a notice gets it exactly once.
import { randomBytes } from 'node:crypto'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { basicHeader, form } from '../policy/signers.js'

const pg = await freshPostgres()

async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const started = Date.now()
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe.skipIf(!pg)('two gateways running the notices', () => {
  let a: Stack
  let b: Stack
  let smtp: TestSmtp
  const ids = Array.from({ length: 12 }, (_, i) => `user${String(i).padStart(2, '0')}`)

  beforeAll(async () => {
    smtp = await startTestSmtp()
    const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    const overrides = { mail: { smtpUrl: smtp.url, sendIntervalSeconds: 1 }, notices: { intervalSeconds: 1 }, migration: { usageFlushMs: 200, policyRefreshMs: 200 } }
    a = await startStack({ ...shared, overrides })
    b = await startStack({ ...shared, coreUrl: a.coreUrl, overrides })
  })

  afterAll(async () => {
    await b?.close()
    await a?.close()
    await smtp?.close()
    await pg?.drop()
  })

  it('every message arrives exactly once', async () => {
    for (const [i, id] of ids.entries()) {
      const user = await a.addUser(id)
      expect((await a.admin('PUT', `/admin/users/${id}/email`, { email: `${id}@example.test` })).status).toBe(200)
      // Half the requests reach each gateway.
      const target = i % 2 === 0 ? a : b
      const res = await request(`${target.globalUrl}/api/statuses/update.json`, {
        method: 'POST',
        headers: { ...form, ...basicHeader(id, user.api_password), 'user-agent': `Tool${i}/1.0`, host: new URL(a.url).host },
        body: 'status=hi',
      })
      await res.body.dump()
      expect(res.statusCode).toBe(200)
    }
    // Both gateways' usage written, then the policy that puts Basic under notice.
    for (const s of [a, b]) expect((await s.admin('GET', '/admin/usage')).status).toBe(200)
    expect((await a.admin('PUT', '/admin/policy', { basic: { state: 'deprecate' } })).status).toBe(200)

    await eventually(() => (smtp.mails.length >= ids.length ? true : undefined), 60_000)
    // A few more passes of both gateways: nothing more arrives.
    await new Promise((r) => setTimeout(r, 3000))
    const recipients = smtp.mails.flatMap((m) => m.to).sort()
    expect(recipients).toEqual(ids.map((id) => `${id}@example.test`))
    for (const [i, id] of ids.entries()) {
      const mail = smtp.mails.find((m) => m.to.includes(`${id}@example.test`))!
      expect(mail.text).toContain(`Tool${i}/1.0: 1 request,`)
    }
    // Either gateway lists the same notices, every one sent.
    const listed = await b.admin<{ notices: Array<{ user: string; status: string; step: string }> }>('GET', '/admin/notices')
    expect(listed.body.notices.map((n) => `${n.user} ${n.step} ${n.status}`).sort()).toEqual(ids.map((id) => `${id} announced sent`))
  }, 120_000)
})
