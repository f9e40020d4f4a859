// A retirement rehearsed over eight days on the test's clock (docs/operations.md#running-a-retirement),
// embedded and with two gateways on one PostgreSQL database: Basic and WSSE deprecated with
// a deny scheduled a month away, four users told; one moves to OAuth; the deny is moved
// earlier and everyone told the later date who has not moved gets exactly one message with
// the new date; the day before, the reminder; after the deny, the retirement notice to the
// one refused. Every day, `kigo notices preview --at` shows what the pass then sends, byte
// for byte; a user of the global deployment gets links to it.
import { randomBytes } from 'node:crypto'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { readMail, startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { basicHeader, form, oauthHeader, wsseHeader, type OAuthClient } from '../policy/signers.js'

const day = 86_400_000
const t0 = Date.parse('2031-05-01T08:00:00Z')
const domestic = 'kigo.test'
const global = 'global.kigo.test'
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
const minute = (ms: number) => iso(ms).slice(0, 16).replace('T', ' ')
const people = ['ann', 'ben', 'cat', 'dan'] as const
type Person = (typeof people)[number]
const address = (id: string) => `${id}@example.test`

interface Preview { email: string | null; message: { subject: string; text: string; html: string } | null }

/** One rehearsal against `gateways` (one, or two sharing a database), on the clock `clock.now`. */
function rehearse(name: string, start: (now: () => number, smtpUrl: string) => Promise<Stack[]>, enabled = true) {
  describe.skipIf(!enabled)(name, () => {
    const clock = { now: t0 }
    let smtp: TestSmtp
    let gateways: Stack[]
    const users: Record<string, { api_password: string }> = {}
    let catApp: OAuthClient

    const kigo = async (on: Stack, ...args: string[]) => {
      let stdout = ''
      let stderr = ''
      const code = await main(args, { KIGO_ADMIN_URL: on.adminUrl, KIGO_ADMIN_TOKEN: on.config.adminToken }, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
      expect(stderr, args.join(' ')).toBe('')
      expect(code, args.join(' ')).toBe(0)
      return stdout
    }
    /** A legacy request of `user` through gateway `via`, to the deployment `host`. */
    const legacy = async (via: Stack, host: string, user: Person, method: 'basic' | 'wsse', userAgent: string) => {
      const credential = method === 'basic' ? basicHeader(user, users[user]!.api_password) : wsseHeader(user, users[user]!.api_password, clock.now)
      const res = await request(`${via.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...credential, 'user-agent': userAgent, host }, body: 'status=hi' })
      await res.body.dump()
      return res.statusCode
    }
    const flushUsage = async () => {
      for (const g of gateways) expect((await g.admin('GET', '/admin/usage')).status).toBe(200)
    }
    /** `kigo notices preview <user> --at <now>` on the last gateway (the one the policy was not set on). */
    const preview = async (user: Person, at = clock.now) => JSON.parse(await kigo(gateways.at(-1)!, 'notices', 'preview', user, '--at', iso(at), '--json')) as Preview
    /** One pass on every gateway at once: one decides, each sends what is queued. */
    const pass = async () => {
      await Promise.all(gateways.map((g) => kigo(g, 'notices', 'run', '--json')))
    }
    /** The mails each person got since `before`, as they read them. */
    const mailsSince = (before: number) => Object.fromEntries(people.map((p) => [p, smtp.mails.slice(before).filter((m) => m.to.includes(address(p))).map((m) => readMail(m.raw))]))
    /** Waits until the last gateway's policy shows `wanted` in ann's preview (gateways re-read the policy every 200 ms). */
    const policySeen = async (wanted: string) => {
      for (let i = 0; i < 200; i++) {
        if ((await preview('ann')).message?.text.includes(wanted) === true) return
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error(`the policy showing "${wanted}" never reached the last gateway`)
    }
    /** Previews for everyone now, then the pass: each mail sent is its preview, and only those with one get a mail. */
    const passMatchingPreviews = async () => {
      const previews = Object.fromEntries(await Promise.all(people.map(async (p) => [p, await preview(p)] as const)))
      const before = smtp.mails.length
      await pass()
      await pass()
      const got = mailsSince(before)
      for (const p of people) {
        const message = previews[p]!.message
        expect(got[p], p).toEqual(message === null ? [] : [message])
      }
      return got
    }

    beforeAll(async () => {
      smtp = await startTestSmtp()
      gateways = await start(() => clock.now, smtp.url)
      const a = gateways[0]!
      for (const id of people) {
        users[id] = await a.addUser(id, id[0]!.toUpperCase() + id.slice(1))
        expect((await a.admin('PUT', `/admin/users/${id}/email`, { email: address(id) })).status).toBe(200)
      }
      catApp = await a.addOAuthClient('cat', ['write_public'])
    })

    afterAll(async () => {
      for (const g of [...(gateways ?? [])].reverse()) await g.close()
      await smtp?.close()
    })

    it('eight days: told once, told again once when the date moves earlier (not the one who moved), reminded, retired; preview --at is what is sent', async () => {
      const a = gateways[0]!
      const b = gateways.at(-1)!
      // Day 0: four users of Basic (dan also of WSSE); ben through the global deployment.
      expect(await legacy(a, domestic, 'ann', 'basic', 'Tweeter/1.0')).toBe(200)
      expect(await legacy(b, global, 'ben', 'basic', 'GlobeApp/2.1')).toBe(200)
      expect(await legacy(b, domestic, 'cat', 'basic', 'Feeder/1.0')).toBe(200)
      expect(await legacy(a, domestic, 'dan', 'basic', 'DanTool/1.0')).toBe(200)
      expect(await legacy(b, domestic, 'dan', 'wsse', 'DanWsse/1.0')).toBe(200)
      await flushUsage()
      const later = t0 + 30 * day
      for (const method of ['wsse', 'basic']) {
        await kigo(a, 'policy', 'set', method, 'deprecate')
        await kigo(a, 'policy', 'set', method, 'deny', '--from', iso(later), '--yes')
      }
      await policySeen(`It stops working on ${minute(later)} UTC.`)
      const day0 = await passMatchingPreviews()
      for (const p of people) expect(day0[p], p).toHaveLength(1)
      expect(day0.ann![0]!.subject).toBe('HTTP Basic authentication is being retired: your clients need to move')
      expect(day0.ann![0]!.text).toContain(`How to move your tools: http://${domestic}/account/moving\n`)
      // ben's requests came through the global deployment: his links are to it.
      expect(day0.ben![0]!.text).toContain(`How to move your tools: http://${global}/account/moving\nYour account (the same list, kept up to date): http://${global}/account\n`)
      expect(day0.ben![0]!.text).not.toContain(`http://${domestic}`)
      // dan used both methods: one message covering both.
      expect(day0.dan![0]!.subject).toBe('HTTP Basic authentication and WSSE authentication: your clients need to move')
      expect(day0.dan![0]!.text).toContain('DanTool/1.0: 1 request')
      expect(day0.dan![0]!.text).toContain('DanWsse/1.0: 1 request')

      // Day 1: cat's client moves to OAuth. Nothing new to tell anyone.
      clock.now = t0 + day
      const url = `http://${domestic}/api/statuses/update.json`
      const moved = await request(`${a.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...oauthHeader(catApp, { url, method: 'POST', data: { status: 'hi' } }, clock.now), 'user-agent': 'Feeder/2.0', host: domestic }, body: 'status=hi' })
      await moved.body.dump()
      expect(moved.statusCode).toBe(200)
      await flushUsage()
      expect(await passMatchingPreviews()).toEqual({ ann: [], ben: [], cat: [], dan: [] })

      // Day 2: nobody made a request since; still nothing new.
      clock.now = t0 + 2 * day
      expect(await passMatchingPreviews()).toEqual({ ann: [], ben: [], cat: [], dan: [] })

      // Day 3: the deny is moved earlier, to day 5. One message each to who was told day 30
      // and has not moved (none made a request since), none to cat.
      clock.now = t0 + 3 * day
      const sooner = t0 + 5 * day
      for (const method of ['wsse', 'basic']) await kigo(a, 'policy', 'set', method, 'deny', '--from', iso(sooner), '--schedule', 'none', '--yes')
      await policySeen(`It stops working on ${minute(sooner)} UTC.`)
      const day3 = await passMatchingPreviews()
      expect(Object.fromEntries(people.map((p) => [p, day3[p]!.length]))).toEqual({ ann: 1, ben: 1, cat: 0, dan: 1 })
      expect(day3.ann![0]!.subject).toBe('HTTP Basic authentication stops working earlier than we told you: your clients need to move')
      expect(day3.ann![0]!.text).toContain(`It stops working on ${minute(sooner)} UTC.`)
      expect(day3.dan![0]!.text).toContain('DanWsse/1.0')
      // Rehearsed before it happens: what ann gets tomorrow, the day before the deny, with the schedule as it now stands.
      const tomorrow = await preview('ann', t0 + 4 * day)
      expect(tomorrow.message!.subject).toBe('HTTP Basic authentication stops working within a day: your clients need to move')
      expect(await passMatchingPreviews()).toEqual({ ann: [], ben: [], cat: [], dan: [] })

      // Day 4: the day before; what was rehearsed on day 3 is what ann gets.
      clock.now = t0 + 4 * day
      const day4 = await passMatchingPreviews()
      expect(day4.ann).toEqual([tomorrow.message])
      expect(Object.fromEntries(people.map((p) => [p, day4[p]!.length]))).toEqual({ ann: 1, ben: 1, cat: 0, dan: 1 })

      // Day 5 (an hour after the deny): nobody was refused, nothing to tell.
      clock.now = sooner + 3_600_000
      expect(await passMatchingPreviews()).toEqual({ ann: [], ben: [], cat: [], dan: [] })

      // Day 6: ann's tool is refused; she is told it has been switched off.
      clock.now = t0 + 6 * day
      expect(await legacy(a, domestic, 'ann', 'basic', 'Tweeter/1.0')).toBe(403)
      await flushUsage()
      const day6 = await passMatchingPreviews()
      expect(Object.fromEntries(people.map((p) => [p, day6[p]!.length]))).toEqual({ ann: 1, ben: 0, cat: 0, dan: 0 })
      expect(day6.ann![0]!.subject).toBe('HTTP Basic authentication has been switched off: your clients need to move')

      // Days 7 and 8: nothing more.
      for (const d of [7, 8]) {
        clock.now = t0 + d * day
        expect(await passMatchingPreviews()).toEqual({ ann: [], ben: [], cat: [], dan: [] })
      }
      // In all: every message once, across the gateways.
      const all = mailsSince(0)
      expect(Object.fromEntries(people.map((p) => [p, all[p]!.length]))).toEqual({ ann: 4, ben: 3, cat: 1, dan: 3 })
    }, 180_000)
  })
}

const overrides = (smtpUrl: string) => ({
  domesticHost: domestic,
  globalHost: global,
  mail: { smtpUrl, sendIntervalSeconds: 0 },
  notices: { intervalSeconds: 0 },
  migration: { usageFlushMs: 200, policyRefreshMs: 200 },
})

rehearse('a retirement rehearsed, embedded', async (now, smtpUrl) => [await startStack({ now, overrides: overrides(smtpUrl) })])

const pg = await freshPostgres()
afterAll(async () => pg?.drop())

rehearse('a retirement rehearsed, two gateways on PostgreSQL', async (now, smtpUrl) => {
  const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url'), now, overrides: overrides(smtpUrl) }
  const a = await startStack(shared)
  const b = await startStack({ ...shared, coreUrl: a.coreUrl })
  return [a, b]
}, pg !== null && pg !== undefined)
