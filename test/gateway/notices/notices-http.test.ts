// Migration notices through a whole kigo (docs/gateway.md#migration-notices), embedded
// mode, a real SMTP server: the plan before a change, the notice each legacy user gets
// (once per step, steps due together in one message), nothing for a user whose client
// moved to OAuth, the unreachable user counted and shown the notice on the account page
// with the endpoints their client called, `kigo notices run|list|preview`, the metric,
// and the dashboard's panel. The clock is the test's: the gateway's policy, usage and
// notices read it.
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../../src/cli/kigo.js'
import { cliOf } from '../../helpers/cli.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { readMail, startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { basicHeader, form, oauthHeader, type OAuthClient } from '../policy/signers.js'
import { WebClient } from '../provider/helpers.js'
import { signInPath, signInThrough, type Site } from '../login-api/helpers.js'

const day = 86_400_000
let clock = Date.parse('2030-03-01T08:00:00Z')
let stack: Stack
let smtp: TestSmtp
let env: Record<string, string>
const users: Record<string, { password: string; api_password: string }> = {}
let carolApp: OAuthClient

const { kigo, json: kigoJson } = cliOf(() => env)

const viaBasic = async (user: string, userAgent: string, path = '/api/statuses/update.json') => {
  const res = await fetch(`${stack.url}${path}`, {
    method: path.includes('update') ? 'POST' : 'GET',
    headers: { ...(path.includes('update') ? form : {}), ...basicHeader(user, users[user]!.api_password), 'user-agent': userAgent },
    ...(path.includes('update') ? { body: 'status=hi' } : {}),
  })
  await res.text()
  return res.status
}

const viaOAuth = async (app: OAuthClient, userAgent: string) => {
  const url = `${stack.url}/api/statuses/update.json`
  const res = await fetch(url, { method: 'POST', headers: { ...form, ...oauthHeader(app, { url, method: 'POST', data: { status: 'hi' } }, clock), 'user-agent': userAgent }, body: 'status=hi' })
  await res.text()
  return res.status
}

type Preview = { user: string; email: string | null; message: { subject: string; text: string; html: string } | null; notices: Array<{ method: string; steps_due: string[]; clients: Array<{ client: string }> }> }

/** The one mail to `address` since `before` mails, as its reader sees it. */
const onlyMailTo = (address: string, before: number) => {
  const mails = smtp.mails.slice(before).filter((m) => m.to.includes(address))
  expect(mails).toHaveLength(1)
  return readMail(mails[0]!.raw)
}

/** Writes this gateway's pending usage (GET /admin/usage flushes first). */
const flushUsage = async () => expect((await stack.admin('GET', '/admin/usage')).status).toBe(200)

/** The mails to `address`, their folded header lines unfolded (RFC 5322 §2.2.3). */
const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address)).map((m) => ({ ...m, text: m.text.replace(/\r?\n[ \t]+/g, ' ') }))

beforeAll(async () => {
  smtp = await startTestSmtp()
  stack = await startStack({
    now: () => clock,
    overrides: {
      mail: { smtpUrl: smtp.url, sendIntervalSeconds: 0 },
      notices: { intervalSeconds: 0 },
      migration: { usageFlushMs: 200 },
    },
  })
  env = { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }
  for (const id of ['alice', 'bobby', 'carol']) users[id] = await stack.addUser(id, id[0]!.toUpperCase() + id.slice(1))
  expect((await stack.admin('PUT', '/admin/users/alice/email', { email: 'alice@example.test' })).status).toBe(200)
  expect((await stack.admin('PUT', '/admin/users/carol/email', { email: 'carol@example.test' })).status).toBe(200)
  carolApp = await stack.addOAuthClient('carol', ['write_public'])
})

afterAll(async () => {
  await stack?.close()
  await smtp?.close()
})

describe('migration notices', () => {
  it('plan: who a deny of basic would touch, before anything changes', async () => {
    expect(await viaBasic('alice', 'HaikuDroid/3.2 (Android 9)')).toBe(200)
    expect(await viaBasic('alice', 'HaikuDroid/3.2 (Android 9)', '/api/statuses/friends_timeline.json')).toBe(200)
    expect(await viaBasic('bobby', 'curl/8.5.0')).toBe(200)
    expect(await viaBasic('carol', 'Feeder/1.0')).toBe(200)
    clock += 60_000
    expect(await viaOAuth(carolApp, 'Feeder/2.0')).toBe(200)
    await flushUsage()

    const plan = await kigoJson('policy', 'plan', 'basic', 'deny', '--from', '2030-04-01T00:00:00Z')
    // carol's Feeder moved to OAuth: counted apart, as moved.
    expect(plan).toEqual({ method: 'basic', state: 'deny', from: '2030-04-01T00:00:00Z', lookback_days: 30, users: 2, users_with_email: 1, users_without_email: 1, clients: 2, requests: 3, sites: 0, moved_users: 1 })
    const api = await stack.admin('POST', '/admin/policy/plan', { method: 'basic', state: 'deny', from: '2030-04-01T00:00:00Z' })
    expect(api).toEqual({ status: 200, body: plan })
    const text = await kigo('policy', 'plan', 'basic', 'deny', '--from', '2030-04-01T00:00:00Z')
    expect(text.stdout).toBe('basic deny from 2030-04-01T00:00:00Z: 2 users (1 with a contact e-mail, 1 without) not moved yet, 2 clients, 3 accepted requests in the last 30 days (1 user moved, not counted). Their requests are refused. Notices go to those users: 1 by mail, 1 on the account page only (no contact e-mail).\n')
    // Nobody used WSSE.
    expect((await kigoJson('policy', 'plan', 'wsse', 'deny')).users).toBe(0)
    // Nothing changed, nothing told.
    expect((await kigoJson<{ basic: { state: string } }>('policy', 'show')).basic.state).toBe('allow')
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 0, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(0)
  })

  it('plan: bad input is a 400 naming the field, nothing changed', async () => {
    for (const body of [{ method: 'oauth', state: 'deny' }, { method: 'basic', state: 'gone' }, { method: 'basic', state: 'deny', from: 'tomorrow' }, { method: 'basic', state: 'deny', from: '2030-02-30' }, { method: 'basic', state: 'deny', extra: 1 }, [], 'x']) {
      const r = await stack.admin<{ error: { code: string; message: string } }>('POST', '/admin/policy/plan', body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code).toBe('invalid_parameter')
    }
    expect((await kigo('policy', 'plan', 'basic', 'gone')).code).toBe(2)
  })

  it('policy set to deny on a terminal shows the plan and asks; no answer changes nothing, --yes asks nothing', async () => {
    /** `kigo` as on a terminal: stdin and stderr are TTYs; `answer` is typed once the question is asked. */
    const onTerminal = async (answer: string, ...args: string[]) => {
      let stdout = ''
      let stderr = ''
      const stdin = Object.assign(new PassThrough(), { isTTY: true })
      const code = await main(args, env, {
        stdout: { write: (s: string) => (stdout += s) },
        stderr: { isTTY: true, write: (s: string) => { stderr += s; if (s.includes('[y/N]')) stdin.write(`${answer}\n`) } },
        stdin,
      })
      return { code, stdout, stderr }
    }
    const no = await onTerminal('n', 'policy', 'set', 'basic', 'deny')
    expect(no.code).toBe(1)
    expect(no.stderr).toContain('basic deny from ')
    expect(no.stderr).toContain(': 2 users (1 with a contact e-mail, 1 without) not moved yet')
    expect(no.stderr).toMatch(/Apply this change\? \[y\/N\] /)
    expect(no.stderr).toMatch(/kigo: policy set: not changed/)
    expect((await kigoJson<{ basic: { state: string } }>('policy', 'show')).basic.state).toBe('allow')
    // Deprecate is not refusing anything: nothing asked.
    const deprecate = await onTerminal('n', 'policy', 'set', 'basic', 'deprecate')
    expect(deprecate.code).toBe(0)
    expect(deprecate.stderr).toBe('')
    const yes = await onTerminal('y', 'policy', 'set', 'basic', 'brownout', '--windows', '03:00-04:00', '--from', '2031-01-01T00:00:00Z')
    expect(yes.code).toBe(0)
    expect(yes.stdout).toContain('scheduled: brownout from 2031-01-01T00:00:00Z')
    const skipped = await onTerminal('n', 'policy', 'set', 'basic', 'deprecate', '--schedule', 'none', '--yes')
    expect(skipped.code).toBe(0)
    expect(skipped.stderr).toBe('')
    const policy = await kigoJson<{ basic: { state: string; schedule: unknown[] } }>('policy', 'show')
    expect(policy.basic).toMatchObject({ state: 'deprecate', schedule: [] })
    // Back to allow for what follows (the announcement is tested next).
    expect((await kigo('policy', 'set', 'basic', 'allow')).code).toBe(0)
  })

  it('announces a scheduled deny: one mail to alice, bobby unreachable, carol (moved to OAuth) told nothing', async () => {
    const denyAt = new Date(clock + 30 * day).toISOString().replace(/\.\d{3}Z$/, 'Z')
    expect((await kigo('policy', 'set', 'basic', 'deprecate')).code).toBe(0)
    expect((await kigo('policy', 'set', 'basic', 'deny', '--from', denyAt)).code).toBe(0)
    const preview = await kigoJson<Preview>('notices', 'preview', 'alice')
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)
    // What the preview showed is what was sent, byte for byte.
    const sent = onlyMailTo('alice@example.test', 0)
    expect(sent).toEqual({ subject: preview.message!.subject, text: preview.message!.text, html: preview.message!.html })
    expect(sent.subject).toBe('HTTP Basic authentication is being retired: your clients need to move')
    const mail = sent.text
    expect(mail).toContain('HaikuDroid/3.2 (Android 9): 2 requests, last seen 2030-03-01 08:00 UTC.')
    expect(mail).toContain(`It stops working on ${denyAt.slice(0, 16).replace('T', ' ')} UTC.`)
    expect(mail).toContain(`How to move your tools: ${stack.url}/account/moving`)
    expect(mail).toContain(`Your account (the same list, kept up to date): ${stack.url}/account\n`)
    expect(mail).toContain(`If you write the tool yourself, the developer guide: ${stack.url}/migration`)
    expect(mail).not.toContain('curl')
    expect(mailsTo('carol@example.test')).toHaveLength(0)

    // Another pass: nothing new.
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 0, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)

    const list = await kigoJson<{ notices: Array<Record<string, unknown>> }>('notices', 'list')
    expect(list.notices.map((n) => [n.user, n.method, n.step, n.status, n.email])).toEqual(expect.arrayContaining([
      ['alice', 'basic', 'announced', 'sent', 'alice@example.test'],
      ['bobby', 'basic', 'announced', 'unreachable', null],
    ]))
    expect(list.notices).toHaveLength(2)
    expect(list.notices.find((n) => n.user === 'alice')).toMatchObject({ attempts: 1, last_error: null, sent_at: expect.stringMatching(/Z$/) })
    const unreachable = await kigoJson<{ notices: unknown[] }>('notices', 'list', '--status', 'unreachable')
    expect(unreachable.notices).toHaveLength(1)

    const metrics = await (await fetch(`${stack.adminUrl}/metrics`)).text()
    expect(metrics).toMatch(/^kigo_notices_total\{method="basic",step="announced",outcome="sent"\} 1$/m)
    expect(metrics).toMatch(/^kigo_notices_total\{method="basic",step="announced",outcome="unreachable"\} 1$/m)
  })

  it('a deny brought forward to 5 days away: one message, told the new date and the week\'s reminder, also to who made no request since', async () => {
    clock += day
    expect(await viaBasic('alice', 'HaikuDroid/3.2 (Android 9)')).toBe(200)
    await flushUsage()
    clock += day
    const denyAt = new Date(clock + 5 * day).toISOString().replace(/\.\d{3}Z$/, 'Z')
    expect((await kigo('policy', 'set', 'basic', 'deny', '--from', denyAt, '--schedule', 'none')).code).toBe(0)
    const before = smtp.mails.length
    const preview = await kigoJson<Preview>('notices', 'preview', 'alice')
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 0, failed: 0, pending: 0 })
    const sent = onlyMailTo('alice@example.test', before)
    expect(sent).toEqual({ subject: preview.message!.subject, text: preview.message!.text, html: preview.message!.html })
    expect(sent.subject).toBe('HTTP Basic authentication stops working earlier than we told you: your clients need to move')
    expect(sent.text).toContain(`It stops working on ${denyAt.slice(0, 16).replace('T', ' ')} UTC.`)
    const steps = (await kigoJson<{ notices: Array<{ step: string }> }>('notices', 'list', '--user', 'alice')).notices.map((n) => n.step).sort()
    expect(steps).toEqual(['announced', 'date_moved', 'reminder_7d'])
    // bobby made no request since the announcement and has not moved: silence is not moving, he is told too (on his account page).
    const bobby = (await kigoJson<{ notices: Array<{ step: string; status: string }> }>('notices', 'list', '--user', 'bobby')).notices
    expect(bobby.map((n) => `${n.step} ${n.status}`).sort()).toEqual(['announced unreachable', 'date_moved unreachable', 'reminder_7d unreachable'])
  })

  it('preview: once everything due was told, nothing new to send; without sending anything', async () => {
    const before = smtp.mails.length
    const p = await kigoJson<Preview>('notices', 'preview', 'alice')
    expect(p.email).toBe('alice@example.test')
    expect(p.notices).toEqual([{ method: 'basic', steps_due: [], clients: [{ client: 'HaikuDroid/3.2 (Android 9)', requests: 3, last_seen: expect.any(String) }] }])
    expect(p.message).toBeNull()
    expect((await kigo('notices', 'preview', 'alice')).stdout).toBe('alice: nothing new to send (every step due was told already)\n')
    expect((await kigoJson<{ message: unknown }>('notices', 'preview', 'carol')).message).toBeNull()
    expect((await kigo('notices', 'preview', 'nobody1')).code).toBe(1)
    // --at must be an instant: a 400 naming it, nothing sent.
    for (const at of ['tomorrow', '2030-02-30T00:00:00Z']) {
      const r = await stack.admin<{ error: { code: string; message: string } }>('GET', `/admin/notices/preview?user=alice&at=${encodeURIComponent(at)}`)
      expect(r.status, at).toBe(400)
      expect(r.body.error.code).toBe('invalid_parameter')
      expect(r.body.error.message).toContain('"at"')
    }
    expect((await kigo('notices', 'preview', 'alice', '--at', 'tomorrow')).code).toBe(1)
    expect(smtp.mails.length).toBe(before)
  })

  it('the account page shows the unreachable user the notice, with the endpoints their client called', async () => {
    await new Promise((r) => setTimeout(r, 400))
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', 'bobby', users.bobby!.password)).status).toBe(303)
    const page = (await web.get('/account')).text
    expect(page).toContain('id="migration-notice"')
    expect(page).toContain('curl/8.5.0')
    expect(page).toMatch(/It stops working on <span class="date">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/span>\./)
    expect(page).toContain('<code>statuses/update</code>')
    expect(page).toContain('You have no contact e-mail, so this notice is not mailed to you')

    const alice = new WebClient(stack.url)
    expect((await alice.signIn('/account/login', 'alice', users.alice!.password)).status).toBe(303)
    const alicePage = (await alice.get('/account')).text
    expect(alicePage).toContain('<code>statuses/friends_timeline</code>')
    expect(alicePage).toContain('This notice is also mailed to alice@example.test')

    // carol's client moved: no notice on her page.
    const carol = new WebClient(stack.url)
    expect((await carol.signIn('/account/login', 'carol', users.carol!.password)).status).toBe(303)
    expect((await carol.get('/account')).text).not.toContain('id="migration-notice"')
  })

  it('the dashboard shows the next change\'s impact, the notices per step and who moved', async () => {
    const res = await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    const page = await res.text()
    expect(res.status).toBe(200)
    expect(page).toContain('id="notices"')
    expect(page).toMatch(/<li data-method="basic">basic deny from [^<]+: 2 users \(1 with a contact e-mail, 1 without\) not moved yet/)
    expect(page).toMatch(/<tr data-method="basic" data-step="announced">.*<td class="num" data-label="Sent">1<\/td><td class="num" data-label="Failed">0<\/td><td class="num" data-label="Pending">0<\/td><td class="num" data-label="Unreachable">1<\/td>/)
    expect(page).toMatch(/<tr data-method="basic" data-step="reminder_7d">.*data-label="Sent">1</)
    expect(page).toMatch(/<tr data-method="basic"><td data-label="Method">HTTP Basic authentication<\/td><td class="num" data-label="Told">2<\/td>/)
  })

  it('retired once the deny took effect, to who was refused since', async () => {
    clock += 6 * day
    expect(await viaBasic('alice', 'HaikuDroid/3.2 (Android 9)')).toBe(403)
    await flushUsage()
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 1, failed: 0, pending: 0 })
    const last = mailsTo('alice@example.test').at(-1)!.text
    expect(last).toMatch(/^Subject: HTTP Basic authentication has been switched off/m)
    expect(last).toContain('Refused: switched off since')
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 0, failed: 0, pending: 0 })
  })

  it('a login-API site\'s owner is told about their site, not the users who sign in through it', async () => {
    const site = (await stack.admin<Site>('POST', '/admin/sites', { name: "Carol's blog", owner: 'carol', callback: 'https://blog.example/cb' })).body
    const { answer } = await signInThrough(new WebClient(stack.url), signInPath(site), { id: 'alice', password: users.alice!.password })
    expect(answer.status).toBe(302)
    await flushUsage()
    const plan = await kigoJson('policy', 'plan', 'login_api', 'deny')
    expect(plan).toMatchObject({ users: 1, sites: 1, clients: 1 })
    expect((await kigo('policy', 'set', 'login_api', 'deprecate')).code).toBe(0)
    const before = smtp.mails.length
    expect(await kigoJson('notices', 'run')).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(smtp.mails.length).toBe(before + 1)
    const mail = mailsTo('carol@example.test')[0]!.text
    expect(mail).toMatch(/^Subject: The login API is being retired/m)
    expect(mail).toContain("Carol's blog: 1 sign-in, last seen")
    expect(mail).toContain('Move your site from the login API to OpenID Connect')
    const listed = await kigoJson<{ notices: Array<{ user: string; method: string; step: string; status: string }> }>('notices', 'list', '--method', 'login_api')
    expect(listed.notices).toEqual([expect.objectContaining({ user: 'carol', method: 'login_api', step: 'announced', status: 'sent' })])
    // The site's owner sees the same on the account page: the site, its sign-ins, what to do.
    const owner = new WebClient(stack.url)
    expect((await owner.signIn('/account/login', 'carol', users.carol!.password)).status).toBe(303)
    const page = (await owner.get('/account')).text
    const notice = page.slice(page.indexOf('id="migration-notice"'), page.indexOf('</section>', page.indexOf('id="migration-notice"')))
    expect(notice).toContain('Carol&#39;s blog')
    expect(notice).toMatch(/1 sign-in/)
    expect(notice).toContain('OpenID Connect')
  })
})
