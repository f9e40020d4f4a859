// OAuth 1.0a retired the way OpenStreetMap did it, rehearsed on the test's clock
// (docs/operations.md#running-a-retirement), embedded and on PostgreSQL: registration of new
// OAuth 1.0a applications closed (the API, the CLI and the account page say why and point to
// OAuth 2.0; the application already registered keeps working), the application's owner told
// (never its users, whose account page says it instead), brownouts, then the deny and the
// retirement notice to the owner whose application was refused. Every pass sends exactly
// what `kigo notices preview` showed.
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { readMail, startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { form, oauthHeader, type OAuthClient } from '../policy/signers.js'
import { csrfOf, WebClient } from '../provider/helpers.js'

const day = 86_400_000
const t0 = Date.parse('2031-06-02T08:00:00Z')
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
const minute = (ms: number) => iso(ms).slice(0, 16).replace('T', ' ')
const people = ['olga', 'pam', 'raj'] as const
type Person = (typeof people)[number]
const address = (id: string) => `${id}@example.test`

interface Preview { email: string | null; message: { subject: string; text: string; html: string } | null; applications: Array<{ consumer_key: string; name: string; says: string }> }

function rehearse(name: string, start: (now: () => number, smtpUrl: string) => Promise<Stack>, enabled = true) {
  describe.skipIf(!enabled)(name, () => {
    const clock = { now: t0 }
    let smtp: TestSmtp
    let stack: Stack
    const users: Record<string, { password: string; api_password: string }> = {}
    const tokens: Partial<Record<Person, OAuthClient>> = {}
    let app: { consumer_key: string; consumer_secret: string }

    const kigo = async (...args: string[]) => {
      let stdout = ''
      let stderr = ''
      const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } })
      return { code, stdout, stderr }
    }
    const ok = async (...args: string[]) => {
      const r = await kigo(...args)
      expect(r.stderr, args.join(' ')).toBe('')
      expect(r.code, args.join(' ')).toBe(0)
      return r.stdout
    }
    /** An OAuth 1.0a request with `user`'s token of the application. */
    const viaOAuth = async (user: Person) => {
      const url = `${stack.url}/api/statuses/update.json`
      const res = await request(url, { method: 'POST', headers: { ...form, ...oauthHeader(tokens[user]!, { url, method: 'POST', data: { status: 'hi' } }, clock.now), 'user-agent': 'Poster/1.0' }, body: 'status=hi' })
      const body = await res.body.text()
      return { status: res.statusCode, headers: res.headers, body }
    }
    const flushUsage = async () => expect((await stack.admin('GET', '/admin/usage')).status).toBe(200)
    const preview = async (user: Person) => JSON.parse(await ok('notices', 'preview', user, '--at', iso(clock.now), '--json')) as Preview
    /** The previews, then a pass: each mail sent is its preview; only those with one get mail. */
    const passMatchingPreviews = async () => {
      const previews = Object.fromEntries(await Promise.all(people.map(async (p) => [p, await preview(p)] as const)))
      const before = smtp.mails.length
      await ok('notices', 'run', '--json')
      const got = Object.fromEntries(people.map((p) => [p, smtp.mails.slice(before).filter((m) => m.to.includes(address(p))).map((m) => readMail(m.raw))]))
      for (const p of people) expect(got[p], p).toEqual(previews[p]!.message === null ? [] : [previews[p]!.message])
      return got
    }
    const counts = (got: Record<string, unknown[]>) => Object.fromEntries(people.map((p) => [p, got[p]!.length]))

    beforeAll(async () => {
      smtp = await startTestSmtp()
      stack = await start(() => clock.now, smtp.url)
      for (const id of people) {
        users[id] = await stack.addUser(id, id[0]!.toUpperCase() + id.slice(1))
        expect((await stack.admin('PUT', `/admin/users/${id}/email`, { email: address(id) })).status).toBe(200)
      }
      // olga's application Poster, which pam and raj authorized.
      const created = await stack.admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name: 'Poster', owner: 'olga', scopes: ['write_public'] })
      expect(created.status).toBe(201)
      app = created.body
      for (const user of ['pam', 'raj'] as const) {
        const t = await stack.admin<{ token: string; token_secret: string }>('POST', '/admin/tokens', { consumer: app.consumer_key, user, scopes: ['write_public'] })
        expect(t.status).toBe(201)
        tokens[user] = { consumerKey: app.consumer_key, consumerSecret: app.consumer_secret, token: t.body.token, tokenSecret: t.body.token_secret }
      }
    })

    afterAll(async () => {
      await stack?.close()
      await smtp?.close()
    })

    it('registration closed, the owner told (not the users), brownouts, the deny and the retirement notice', async () => {
      // Day 0: Poster is used with pam's and raj's tokens.
      expect((await viaOAuth('pam')).status).toBe(200)
      expect((await viaOAuth('raj')).status).toBe(200)
      expect((await viaOAuth('pam')).status).toBe(200)
      await flushUsage()
      const deny = t0 + 10 * day
      await ok('policy', 'set', 'oauth1', 'deprecate', '--close-registration')
      await ok('policy', 'set', 'oauth1', 'deny', '--from', iso(deny), '--yes')
      expect(await ok('policy', 'show')).toContain('registration of new applications closed (existing ones keep working)')

      // Registration closed: the operator API, the CLI and the account page say why; Poster keeps working.
      const refused = await stack.admin<{ error: { code: string; message: string } }>('POST', '/admin/apps', { name: 'Another', owner: 'olga', scopes: ['read_public'] })
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe('registration_closed')
      expect(refused.body.error.message).toContain('Register an OAuth 2.0 client instead')
      const cli = await kigo('apps', 'add', 'Another', '--owner', 'olga', '--scopes', 'read_public')
      expect(cli.code).not.toBe(0)
      expect(cli.stderr).toContain('New OAuth 1.0a applications can no longer be registered')
      expect((await stack.admin<{ apps: unknown[] }>('GET', '/admin/apps?owner=olga')).body.apps).toHaveLength(1)
      const web = new WebClient(stack.url)
      expect((await web.signIn('/account/login', 'olga', users.olga!.password)).status).toBe(303)
      const page = await web.get('/account')
      expect(page.status, page.text.slice(0, 500)).toBe(200)
      expect(page.text).toContain('id="registration-closed"')
      expect(page.text).not.toContain('action="/account/apps"')
      const posted = await web.post('/account/apps', { csrf_token: csrfOf(page.text), name: 'Sneaky', scope: 'read_public' })
      expect(posted.status).toBe(403)
      expect(posted.text).toContain('New OAuth 1.0a applications can no longer be registered')
      expect(posted.text).toContain('href="/developers#oauth2"')
      const kept = await viaOAuth('pam')
      expect(kept.status).toBe(200)
      expect(kept.headers.deprecation).toBe(`@${t0 / 1000}`)
      expect(kept.headers.sunset).toBe(new Date(deny).toUTCString())
      await flushUsage()

      // The pass: olga, the owner, is told; pam and raj are not mailed, and their account page says it.
      const day0 = await passMatchingPreviews()
      expect(counts(day0)).toEqual({ olga: 1, pam: 0, raj: 0 })
      expect(day0.olga![0]!.subject).toBe('OAuth 1.0a is being retired: your clients need to move')
      expect(day0.olga![0]!.text).toContain(`Poster (consumer key ${app.consumer_key}): 4 requests with the OAuth 1.0a tokens of 2 users, last seen ${minute(t0)} UTC.`)
      expect(day0.olga![0]!.text).toContain(`It stops working on ${minute(deny)} UTC.`)
      expect(day0.olga![0]!.text).toContain('You receive this because you registered these applications')
      // The owner is sent to the exchange step of the migration page: the anchor is on the page.
      const exchangeLink = /How to exchange the tokens, step by step: (\S+)/.exec(day0.olga![0]!.text)?.[1]
      expect(exchangeLink).toBe(`${stack.url}/migration#oauth2-exchange`)
      const migrationPage = await (await fetch(exchangeLink!)).text()
      expect(migrationPage).toMatch(/<h3 id="oauth2-exchange">[^<]*OAuth 1\.0a application/)
      const pamPreview = await preview('pam')
      expect(pamPreview.message).toBeNull()
      expect(pamPreview.applications).toEqual([{ consumer_key: app.consumer_key, name: 'Poster', says: expect.stringContaining(`OAuth 1.0a, which is being retired: Works, but is deprecated. It stops working on ${minute(deny)} UTC.`) }])
      const pamWeb = new WebClient(stack.url)
      expect((await pamWeb.signIn('/account/login', 'pam', users.pam!.password)).status).toBe(303)
      expect((await pamWeb.get('/account')).text).toContain('This application signs its requests with OAuth 1.0a, which is being retired')

      // Day 1: brownouts 09:00–12:00 UTC until the deny; inside a window Poster is refused, with the way on.
      clock.now = t0 + day
      await ok('policy', 'set', 'oauth1', 'brownout', '--windows', '09:00-12:00', '--yes')
      clock.now = t0 + day + 2 * 3_600_000 // 10:00
      const browned = await viaOAuth('pam')
      expect(browned.status).toBe(403)
      expect(JSON.parse(browned.body).error).toMatchObject({ code: 'method_retired_temporarily', message: expect.stringContaining('move this client to OAuth 2.0') })
      clock.now = t0 + day + 5 * 3_600_000 // 13:00
      expect((await viaOAuth('pam')).status).toBe(200)
      await flushUsage()
      // Nothing new to tell: olga was told, and the deny's date did not move.
      expect(counts(await passMatchingPreviews())).toEqual({ olga: 0, pam: 0, raj: 0 })

      // Day 4 (six days before the deny): the reminder, to olga only.
      clock.now = t0 + 4 * day
      const day4 = await passMatchingPreviews()
      expect(counts(day4)).toEqual({ olga: 1, pam: 0, raj: 0 })
      expect(day4.olga![0]!.subject).toBe('OAuth 1.0a stops working in a week or less: your clients need to move')

      // After the deny: Poster is refused; olga is told it has been switched off, once.
      clock.now = deny + 3_600_000
      const denied = await viaOAuth('raj')
      expect(denied.status).toBe(403)
      expect(JSON.parse(denied.body).error).toMatchObject({ code: 'method_retired', message: expect.stringContaining('OAuth 1.0a has been retired; use OAuth 2.0') })
      await flushUsage()
      const after = await passMatchingPreviews()
      expect(counts(after)).toEqual({ olga: 1, pam: 0, raj: 0 })
      expect(after.olga![0]!.subject).toBe('OAuth 1.0a has been switched off: your clients need to move')
      clock.now = deny + day
      expect(counts(await passMatchingPreviews())).toEqual({ olga: 0, pam: 0, raj: 0 })

      // The funnel: olga told, not moved (refused since the deny); Poster's users still on OAuth 1.0a.
      const funnel = (await stack.admin<{ methods: Array<Record<string, unknown> & { applications?: unknown[] }> }>('GET', '/admin/notices/funnel')).body.methods.find((m) => m.method === 'oauth1')!
      expect(funnel).toMatchObject({ told: 1, moved: 0, not_moved: 1, refused: 1 })
      expect(funnel.applications).toEqual([{ consumer_key: app.consumer_key, name: 'Poster', owner: 'olga', moved: false, tokens_exchanged: 0, users_authorized_again: 0, users_on_oauth1: 2 }])
    }, 180_000)
  })
}

const overrides = (smtpUrl: string) => ({
  mail: { smtpUrl, sendIntervalSeconds: 0 },
  notices: { intervalSeconds: 0 },
  migration: { usageFlushMs: 200, policyRefreshMs: 200 },
})

rehearse('OAuth 1.0a retired, embedded', (now, smtpUrl) => startStack({ now, overrides: overrides(smtpUrl) }))

const pg = await freshPostgres()
afterAll(async () => pg?.drop())

rehearse('OAuth 1.0a retired, on PostgreSQL', (now, smtpUrl) => startStack({ databaseUrl: pg!.url, now, overrides: overrides(smtpUrl) }), pg !== null && pg !== undefined)
