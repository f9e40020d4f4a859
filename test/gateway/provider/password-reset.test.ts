// "Forgot your password?" by mail, against a real SMTP server started here (smtp-server):
// the link arrives at the account's contact e-mail, works once, expires, never says
// whether an account exists, and a refused password does not spend it. Without SMTP the
// page names the operator's command (account.test.ts).
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { freePort } from '../../helpers/ports.js'
import { WebClient, csrfOf, hiddenField } from './helpers.js'

let stack: Stack
let smtp: SMTPServer
const mails: Array<{ to: string[]; text: string }> = []
let ann: { id: string; password: string }

beforeAll(async () => {
  const port = await freePort()
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let text = ''
      stream.setEncoding('utf8')
      stream.on('data', (chunk: string) => (text += chunk))
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve))
  stack = await startStack({ overrides: { mail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'kigo <no-reply@kigo.test>', resetTtlSeconds: 600 } } })
  ann = await stack.addUser('annreset', 'Ann')
  expect((await stack.admin('PUT', '/admin/users/annreset/email', { email: 'ann@example.com' })).status).toBe(200)
  await stack.addUser('noemail', 'No Mail')
}, 60_000)

afterAll(async () => {
  await stack?.close()
  await new Promise<void>((resolve) => smtp?.close(() => resolve()))
})

/** The link of the newest mail (quoted-printable soft breaks undone). */
function linkIn(text: string): string {
  const plain = text.replace(/=\r?\n/g, '').replace(/=3D/g, '=')
  return /(http:\/\/\S+\/account\/reset\?token=[A-Za-z0-9_%-]+)/.exec(plain)![1]!
}

async function ask(web: WebClient, username: string) {
  const page = await web.get('/account/forgot')
  expect(page.status).toBe(200)
  return web.post('/account/forgot', { csrf_token: csrfOf(page.text), username })
}

describe('forgot password by mail', () => {
  it('mails a single-use link to the contact e-mail; the new password works, the old one and the link do not', async () => {
    const login = await (await fetch(`${stack.url}/account/login`)).text()
    expect(login).toContain('href="/account/forgot"')
    const web = new WebClient(stack.url)
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

    expect((await new WebClient(stack.url).signIn('/account/login', 'annreset', 'a long new password 42')).status).toBe(303)
    expect((await new WebClient(stack.url).signIn('/account/login', 'annreset', ann.password)).status).toBe(403)
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
      const res = await ask(new WebClient(stack.url), name)
      expect(res.status).toBe(200)
      expect(res.text).toContain('If that account has a contact e-mail')
    }
    await new Promise((r) => setTimeout(r, 300))
    expect(mails.length).toBe(before)
  })

  it('refuses a wrong or missing token and a post without the form\'s CSRF token', async () => {
    expect((await fetch(`${stack.url}/account/reset?token=wrong`)).status).toBe(400)
    expect((await fetch(`${stack.url}/account/reset`)).status).toBe(400)
    const web = new WebClient(stack.url)
    expect((await web.post('/account/forgot', { username: 'annreset' })).status).toBe(403)
  })
})
