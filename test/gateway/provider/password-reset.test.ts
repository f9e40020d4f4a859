// "Forgot your password?" by mail, against a real SMTP server started here (smtp-server):
// the link arrives at the account's contact e-mail through the outbox, works once,
// expires, and a refused password does not spend it. From the attacker's side: every user
// ID gets the same page at once, even while the mail server holds a connection and never
// answers, and a mail server that is away costs nothing but a later delivery, once.
// Without SMTP the page sends the user to the operator (account.test.ts).
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { WebClient, csrfOf, hiddenField } from './helpers.js'

let stack: GatewayApp
let smtp: TestSmtp
let mails: TestSmtp['mails']
let ann: { id: string; password: string }
// One reset mail per user per 15 minutes (budgets-http.test.ts): each test asks as if a
// quarter of an hour after the one before.
let offset = 0
beforeEach(() => {
  offset += 16 * 60_000
})

beforeAll(async () => {
  smtp = await startTestSmtp()
  mails = smtp.mails
  // A send may take 20 s (held connections outlast the requests below); a failure is retried after 1 s.
  stack = await gatewayApp({ now: () => Date.now() + offset, overrides: { mail: { smtpUrl: smtp.url, from: 'kigo <no-reply@kigo.test>', resetTtlSeconds: 600, sendIntervalSeconds: 1, sendTimeoutSeconds: 20, retryBaseSeconds: 1, retryMaxSeconds: 1 } } })
  ann = await stack.addUser('annreset', 'Ann')
  expect((await stack.admin('PUT', '/admin/users/annreset/email', { email: 'ann@example.com' })).status).toBe(200)
  await stack.addUser('noemail', 'No Mail')
}, 60_000)

afterAll(async () => {
  await smtp?.close()
  await stack?.close()
})

/** The link of a mail. */
function linkIn(text: string): string {
  return /(http:\/\/\S+\/account\/reset\?token=[A-Za-z0-9_%-]+)/.exec(text)![1]!
}

/** The gateway's kigo_mail_total for reset mails with `outcome`. */
async function resetMails(outcome: string): Promise<number> {
  const text = await (await stack.fetch(`${stack.adminUrl}/metrics`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })).text()
  const line = text.split('\n').find((l) => l.startsWith(`kigo_mail_total{kind="password_reset",outcome="${outcome}"}`))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

async function ask(web: WebClient, username: string) {
  const page = await web.get('/account/forgot')
  expect(page.status).toBe(200)
  return web.post('/account/forgot', { csrf_token: csrfOf(page.text), username })
}

describe('forgot password by mail', () => {
  it('mails a single-use link to the contact e-mail; the new password works, the old one and the link do not', async () => {
    const login = await (await stack.fetch(`${stack.url}/account/login`)).text()
    expect(login).toContain('href="/account/forgot"')
    const web = new WebClient(stack.url, stack.fetch)
    const sent = await ask(web, 'annreset')
    expect(sent.status).toBe(200)
    expect(sent.text).toContain('If that account has a contact e-mail, a link to set a new password is on its way.')
    await expect.poll(() => mails.length).toBe(1)
    expect(mails[0]!.to).toEqual(['ann@example.com'])
    const link = linkIn(mails[0]!.text)
    expect(link.startsWith(`${stack.url}/account/reset?token=`)).toBe(true)

    const form = await web.get(link.slice(stack.url.length))
    expect(form.status).toBe(200)
    const token = hiddenField(form.text, 'token')!
    // A refused password does not spend the link.
    const weak = await web.post('/account/reset', { csrf_token: csrfOf(form.text), token, new_password: 'short', confirm_password: 'short' })
    expect(weak.status).toBe(400)
    const done = await web.post('/account/reset', { csrf_token: csrfOf(form.text), token, new_password: 'a long new password 42', confirm_password: 'a long new password 42' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/account/login?notice=password_reset')

    expect((await new WebClient(stack.url, stack.fetch).signIn('/account/login', 'annreset', 'a long new password 42')).status).toBe(303)
    expect((await new WebClient(stack.url, stack.fetch).signIn('/account/login', 'annreset', ann.password)).status).toBe(403)
    // Once only.
    expect((await web.get(link.slice(stack.url.length))).status).toBe(400)
    const again = await web.post('/account/reset', { csrf_token: csrfOf(form.text), token, new_password: 'another long password 7', confirm_password: 'another long password 7' })
    expect(again.status).toBe(400)
    // Audited as a reset, with the user.
    const events = (await stack.admin<{ events: Array<{ action: string; target: string }> }>('GET', '/admin/audit?target=annreset')).body.events
    expect(events.map((e) => e.action)).toContain('account.reset_password_by_mail')
  })

  it('answers the same for an unknown user and a user without e-mail, and mails nothing', async () => {
    const before = mails.length
    for (const name of ['nobodyhere', 'noemail', 'x']) {
      const res = await ask(new WebClient(stack.url, stack.fetch), name)
      expect(res.status).toBe(200)
      expect(res.text).toContain('If that account has a contact e-mail')
    }
    await new Promise((r) => setTimeout(r, 300))
    expect(mails.length).toBe(before)
  })

  it('refuses a wrong or missing token and a post without the form\'s CSRF token', async () => {
    expect((await stack.fetch(`${stack.url}/account/reset?token=wrong`)).status).toBe(400)
    expect((await stack.fetch(`${stack.url}/account/reset`)).status).toBe(400)
    const web = new WebClient(stack.url, stack.fetch)
    expect((await web.post('/account/forgot', { username: 'annreset' })).status).toBe(403)
  })
})

describe('the reset from the attacker\'s side (docs/security.md#the-password-reset-reveals-nothing)', () => {
  it('answers every user ID with the same page at once while the mail server holds the connection and never answers', async () => {
    const web = new WebClient(stack.url, stack.fetch)
    const csrf = csrfOf((await web.get('/account/forgot')).text)
    const before = mails.length
    smtp.hang = true
    let first!: Awaited<ReturnType<WebClient['post']>>
    const others: Array<Awaited<ReturnType<WebClient['post']>>> = []
    try {
      first = await web.post('/account/forgot', { csrf_token: csrf, username: 'annreset' })
      // Ann's mail is being sent: the mail server has accepted the sender's connection and says nothing.
      await expect.poll(() => smtp.open, { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
      for (const username of ['annreset', 'noemail', 'nobodyhere', 'x', 'ANNRESET', ' annreset', '../annreset', '']) {
        others.push(await web.post('/account/forgot', { csrf_token: csrf, username }))
      }
      // Every answer came while the server still held that connection, and before any mail.
      expect(smtp.open).toBeGreaterThanOrEqual(1)
      expect(mails.length).toBe(before)
    } finally {
      smtp.hang = false
      smtp.release()
    }
    for (const answer of [first, ...others]) {
      expect(answer.status).toBe(200)
      expect(answer.text).toBe(first.text)
    }
    expect(first.text).toContain('If that account has a contact e-mail, a link to set a new password is on its way.')
    // The held send failed when the server let go; it is retried. Ann asked three times
    // (" annreset" is trimmed to her ID), within 15 minutes: one mail, once.
    await expect.poll(() => mails.length - before, { timeout: 15_000 }).toBe(1)
    await sleep(2_500)
    expect(mails.slice(before).map((m) => m.to)).toEqual([['ann@example.com']])
    expect(linkIn(mails[before]!.text)).toContain('/account/reset?token=')
  })

  it('keeps the reset mail while the mail server is away, and delivers it once when it is back', async () => {
    const web = new WebClient(stack.url, stack.fetch)
    const before = mails.length
    const failedBefore = await resetMails('failed')
    await smtp.stop()
    try {
      const res = await ask(web, 'annreset')
      expect(res.status).toBe(200)
      expect(res.text).toContain('If that account has a contact e-mail, a link to set a new password is on its way.')
      // Tried, failed, and tried again (1 s apart here).
      await expect.poll(() => resetMails('failed'), { timeout: 10_000 }).toBeGreaterThanOrEqual(failedBefore + 2)
    } finally {
      await smtp.start()
    }
    await expect.poll(() => mails.length - before, { timeout: 10_000 }).toBe(1)
    await sleep(2_500)
    expect(mails.length - before).toBe(1)
    const link = linkIn(mails.at(-1)!.text)
    expect((await web.get(link.slice(stack.url.length))).status).toBe(200)
  })
})
