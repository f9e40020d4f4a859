// A stolen session is not the account (docs/security.md#a-stolen-session): from the
// attacker's side, over HTTP with a real SMTP server. With only a session cookie and its
// CSRF token, moving the contact e-mail (and with it the reset links) is refused at the
// first step; when the owner does change it, the old address gets a link that puts it
// back and signs everyone out; a password reset within a day of a change is told to the
// old address too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { plainText, startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { WebClient, csrfOf, hiddenField } from './helpers.js'

let stack: GatewayApp
let smtp: TestSmtp
let offset = 0

beforeAll(async () => {
  smtp = await startTestSmtp()
  stack = await gatewayApp({
    now: () => Date.now() + offset,
    overrides: { mail: { smtpUrl: smtp.url, from: 'kigo <no-reply@kigo.test>', sendIntervalSeconds: 1, sendTimeoutSeconds: 5, retryBaseSeconds: 1, retryMaxSeconds: 1 } },
  })
}, 60_000)

afterAll(async () => {
  await smtp?.close()
  await stack?.close()
})

const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address)).map((m) => plainText(m.text))
const emailOf = async (id: string) => (await stack.admin<{ users: Array<{ id: string; email: string | null }> }>('GET', '/admin/users')).body.users.find((u) => u.id === id)?.email
const linkIn = (text: string, path: string) => new RegExp(`http://\\S+(${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_%-]+)`).exec(text)?.[1]

/** A user with a contact e-mail, signed in: the session an attacker would steal. */
async function owner(id: string, email: string) {
  const user = await stack.addUser(id)
  expect((await stack.admin('PUT', `/admin/users/${id}/email`, { email })).status).toBe(200)
  const web = new WebClient(stack.url, stack.fetch)
  expect((await web.signIn('/account/login', id, user.password)).status).toBe(303)
  return { web, password: user.password }
}

async function askReset(id: string) {
  const web = new WebClient(stack.url, stack.fetch)
  const res = await web.post('/account/forgot', { csrf_token: csrfOf((await web.get('/account/forgot')).text), username: id })
  expect(res.status).toBe(200)
}

/** Follows a mailed link's page and presses its button: the answer. */
async function press(link: string, extra: Record<string, string> = {}) {
  const visitor = new WebClient(stack.url, stack.fetch)
  const page = await visitor.get(link)
  expect(page.status).toBe(200)
  return visitor.post(link.split('?')[0]!, { csrf_token: csrfOf(page.text), token: hiddenField(page.text, 'token')!, ...extra })
}

describe('a stolen session', () => {
  it('cannot move the contact e-mail: the takeover stops at its first step, and no mail leaves for the thief', async () => {
    const { web: stolen } = await owner('olga', 'olga@home.example')
    const csrf = csrfOf((await stolen.get('/account')).text)
    const noPassword = await stolen.post('/account/email', { csrf_token: csrf, email: 'thief@evil.example' })
    expect(noPassword.status).toBe(400)
    expect(noPassword.text).toContain('Enter your current password to change your contact e-mail; nothing was saved.')
    const guessed = await stolen.post('/account/email', { csrf_token: csrf, email: 'thief@evil.example', current_password: 'not-her-password' })
    expect(guessed.status).toBe(403)
    expect(guessed.text).toContain('Your current password is not right.')
    // Removing the address (so that no reset can reach the owner) needs it as much.
    expect((await stolen.post('/account/email', { csrf_token: csrf, email: '' })).status).toBe(400)
    expect(await emailOf('olga')).toBe('olga@home.example')
    expect((await stolen.get('/account')).text).not.toContain('Waiting for confirmation')
    // The next step of the chain: a reset goes to the owner, never to the thief.
    await askReset('olga')
    await expect.poll(() => mailsTo('olga@home.example').length, { timeout: 10_000 }).toBe(1)
    expect(mailsTo('olga@home.example')[0]).toContain('/account/reset?token=')
    expect(mailsTo('thief@evil.example')).toEqual([])
  })

  it('wrong passwords at the e-mail form count against the sign-in throttle', async () => {
    const { web: stolen } = await owner('pavel', 'pavel@home.example')
    const csrf = csrfOf((await stolen.get('/account')).text)
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await stolen.post('/account/email', { csrf_token: csrf, email: 'thief@evil.example', current_password: `guess-${i}` })).status)
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(403))
    expect(statuses[10]).toBe(429)
    expect(await emailOf('pavel')).toBe('pavel@home.example')
  })
})

describe('when the address does change', () => {
  it('the old address gets a link that puts it back, once, and signs everyone out', async () => {
    const { web, password } = await owner('quinn', 'quinn@home.example')
    const changed = await web.post('/account/email', { csrf_token: csrfOf((await web.get('/account')).text), email: 'quinn@elsewhere.example', current_password: password })
    expect(changed.status).toBe(303)
    await expect.poll(() => mailsTo('quinn@elsewhere.example').length, { timeout: 10_000 }).toBe(1)
    expect((await press(linkIn(mailsTo('quinn@elsewhere.example')[0]!, '/account/email/verify')!)).status).toBe(200)
    expect(await emailOf('quinn')).toBe('quinn@elsewhere.example')
    await expect.poll(() => mailsTo('quinn@home.example').length, { timeout: 10_000 }).toBe(1)
    const told = mailsTo('quinn@home.example')[0]!
    expect(told).toContain('The contact e-mail of the kigo account quinn is now quinn@elsewhere.example.')
    const undo = linkIn(told, '/account/email/undo')!
    expect(undo).toBeDefined()
    // Opening the link only asks (a mail scanner changes nothing).
    const page = await new WebClient(stack.url, stack.fetch).get(undo)
    expect(page.text).toContain('Put <strong>quinn@home.example</strong> back as the contact e-mail of the account <strong>quinn</strong>?')
    expect(await emailOf('quinn')).toBe('quinn@elsewhere.example')
    const done = await press(undo)
    expect(done.status).toBe(200)
    expect(done.text).toContain('quinn@home.example is the contact e-mail of the account quinn again')
    expect(await emailOf('quinn')).toBe('quinn@home.example')
    // Every session ended: the one that changed the address is signed out.
    const after = await web.get('/account')
    expect(after.status).toBe(303)
    expect(after.headers.get('location')).toContain('/account/login')
    // Once only.
    expect((await new WebClient(stack.url, stack.fetch).get(undo)).status).toBe(400)
    const events = (await stack.admin<{ events: Array<{ action: string; before: unknown; after: unknown }> }>('GET', '/admin/audit?target=quinn')).body.events
    expect(events[0]).toMatchObject({ action: 'account.undo_email', before: { email: 'quinn@elsewhere.example' }, after: { email: 'quinn@home.example' } })
  })

  it('a password reset within a day of the change is told to the old address, with the link that undoes it; a day later it is not', async () => {
    const { web, password } = await owner('rosa', 'rosa@home.example')
    expect((await web.post('/account/email', { csrf_token: csrfOf((await web.get('/account')).text), email: 'rosa@new.example', current_password: password })).status).toBe(303)
    await expect.poll(() => mailsTo('rosa@new.example').length, { timeout: 10_000 }).toBe(1)
    await press(linkIn(mailsTo('rosa@new.example')[0]!, '/account/email/verify')!)
    await expect.poll(() => mailsTo('rosa@home.example').length, { timeout: 10_000 }).toBe(1)

    const resetBy = async (n: number) => {
      await askReset('rosa')
      await expect.poll(() => mailsTo('rosa@new.example').length, { timeout: 10_000 }).toBe(n)
      const reset = await press(linkIn(mailsTo('rosa@new.example')[n - 1]!, '/account/reset')!, { new_password: `a new password ${n}`, confirm_password: `a new password ${n}` })
      expect(reset.status).toBe(303)
    }
    await resetBy(2)
    await expect.poll(() => mailsTo('rosa@home.example').length, { timeout: 10_000 }).toBe(2)
    const told = mailsTo('rosa@home.example')[1]!
    expect(told).toContain('The password of the kigo account rosa was just reset by a link mailed to its new contact e-mail, rosa@new.example.')
    expect(linkIn(told, '/account/email/undo')).toBeDefined()

    offset += 25 * 3_600_000
    try {
      await resetBy(3)
      // A later mail to the old address would have been sent by the time this one is.
      await askReset('sam-none')
      expect(mailsTo('rosa@home.example')).toHaveLength(2)
    } finally {
      offset -= 25 * 3_600_000
    }
  })
})
