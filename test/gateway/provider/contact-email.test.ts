// Contact e-mails that can be trusted (docs/gateway.md#the-contact-e-mail), over HTTP with
// a real SMTP server: a new address is used only after its owner opens the link mailed to
// it (a fetch of the link changes nothing; the button does, once, within its time); the
// old address is told; the account page says what the address receives and what is
// waiting. The link's store keeps digests only, on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ContactEmailStore } from '../../../src/gateway/account-area/contact-email.js'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { WebClient, csrfOf, hiddenField } from './helpers.js'

let stack: GatewayApp
let smtp: TestSmtp
let offset = 0

beforeAll(async () => {
  smtp = await startTestSmtp()
  stack = await gatewayApp({
    now: () => Date.now() + offset,
    overrides: { mail: { smtpUrl: smtp.url, from: 'kigo <no-reply@kigo.test>', sendIntervalSeconds: 1, sendTimeoutSeconds: 5, retryBaseSeconds: 1, retryMaxSeconds: 1, verifyTtlSeconds: 3600 } },
  })
}, 60_000)

afterAll(async () => {
  await smtp?.close()
  await stack?.close()
})

const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address))
const linkIn = (text: string) => /(http:\/\/\S+\/account\/email\/verify\?token=[A-Za-z0-9_%-]+)/.exec(text)![1]!
const emailOf = async (id: string) => (await stack.admin<{ users: Array<{ id: string; email: string | null }> }>('GET', '/admin/users')).body.users.find((u) => u.id === id)?.email

const passwords = new Map<WebClient, string>()

async function signedIn(id: string): Promise<WebClient> {
  const user = await stack.addUser(id)
  const web = new WebClient(stack.url, stack.fetch)
  expect((await web.signIn('/account/login', id, user.password)).status).toBe(303)
  passwords.set(web, user.password)
  return web
}

/** The account page's e-mail form, as its owner sends it (with the current password). */
async function change(web: WebClient, email: string) {
  const account = await web.get('/account')
  return web.post('/account/email', { csrf_token: csrfOf(account.text), email, current_password: passwords.get(web)! })
}

describe('a new contact e-mail', () => {
  it('is used only after its owner opens the mailed link and confirms; the old address is told; the link works once', async () => {
    const web = await signedIn('gina')
    expect((await stack.admin('PUT', '/admin/users/gina/email', { email: 'gina@old.example' })).status).toBe(200)
    const asked = await change(web, 'gina@new.example')
    expect(asked.status).toBe(303)
    const page = await web.get(asked.headers.get('location')!)
    expect(page.text).toContain('We mailed a link to the new address.')
    expect(page.text).toContain('Waiting for confirmation: <strong>gina@new.example</strong>')
    expect(page.text).toContain('<strong>gina@old.example</strong> stays in use')
    expect(page.text).toContain('This address receives migration notices')
    // Not used yet: the operator still sees the old one, and a reset goes to the old one.
    expect(await emailOf('gina')).toBe('gina@old.example')
    const forgot = new WebClient(stack.url, stack.fetch)
    expect((await forgot.post('/account/forgot', { csrf_token: csrfOf((await forgot.get('/account/forgot')).text), username: 'gina' })).status).toBe(200)
    await expect.poll(() => mailsTo('gina@old.example').length, { timeout: 10_000 }).toBe(1)
    expect(mailsTo('gina@old.example')[0]!.text).toContain('/account/reset?token=')

    await expect.poll(() => mailsTo('gina@new.example').length, { timeout: 10_000 }).toBe(1)
    const link = linkIn(mailsTo('gina@new.example')[0]!.text)
    expect(link.startsWith(`${stack.url}/account/email/verify?token=`)).toBe(true)
    // Opening the link (or a mail scanner fetching it) only asks.
    const visitor = new WebClient(stack.url, stack.fetch)
    const confirm = await visitor.get(link.slice(stack.url.length))
    expect(confirm.status).toBe(200)
    expect(confirm.text).toContain('Use <strong>gina@new.example</strong> as the contact e-mail of the account <strong>gina</strong>?')
    expect(await emailOf('gina')).toBe('gina@old.example')
    const token = hiddenField(confirm.text, 'token')!
    expect((await visitor.post('/account/email/verify', { token })).status).toBe(403)
    const done = await visitor.post('/account/email/verify', { csrf_token: csrfOf(confirm.text), token })
    expect(done.status).toBe(200)
    expect(done.text).toContain('gina@new.example is now the contact e-mail of the account gina.')
    expect(await emailOf('gina')).toBe('gina@new.example')
    // The old address is told, once.
    await expect.poll(() => mailsTo('gina@old.example').length, { timeout: 10_000 }).toBe(2)
    expect(mailsTo('gina@old.example')[1]!.text).toContain('The contact e-mail of the kigo account gina is now gina@new.example.')
    // Once only.
    expect((await visitor.get(link.slice(stack.url.length))).status).toBe(400)
    expect((await visitor.post('/account/email/verify', { csrf_token: csrfOf(confirm.text), token })).status).toBe(400)
    // The account page shows it in use, nothing waiting; the audit trail has both steps.
    const account = await web.get('/account')
    expect(account.text).toContain('value="gina@new.example"')
    expect(account.text).not.toContain('Waiting for confirmation')
    const events = (await stack.admin<{ events: Array<{ action: string; before: unknown; after: unknown }> }>('GET', '/admin/audit?target=gina')).body.events
    expect(events.filter((e) => e.action.startsWith('account.'))).toMatchObject([
      { action: 'account.verify_email', before: { email: 'gina@old.example' }, after: { email: 'gina@new.example' } },
      { action: 'account.request_email', after: { pending: 'gina@new.example' } },
    ])
  })

  it('a link stops working after its time, and when a newer address is asked for', async () => {
    const web = await signedIn('hank')
    expect((await change(web, 'hank@first.example')).status).toBe(303)
    await expect.poll(() => mailsTo('hank@first.example').length, { timeout: 10_000 }).toBe(1)
    expect((await change(web, 'hank@second.example')).status).toBe(303)
    await expect.poll(() => mailsTo('hank@second.example').length, { timeout: 10_000 }).toBe(1)
    // The first link was replaced by the second.
    expect((await web.get(linkIn(mailsTo('hank@first.example')[0]!.text).slice(stack.url.length))).status).toBe(400)
    const second = linkIn(mailsTo('hank@second.example')[0]!.text).slice(stack.url.length)
    expect((await web.get(second)).status).toBe(200)
    offset += 3_601_000
    try {
      expect((await web.get(second)).status).toBe(400)
      expect((await web.get('/account')).text).not.toContain('Waiting for confirmation')
    } finally {
      offset -= 3_601_000
    }
    expect(await emailOf('hank')).toBeNull()
  })

  it('removing the address takes effect at once, and the removed address is told', async () => {
    const web = await signedIn('iris')
    expect((await stack.admin('PUT', '/admin/users/iris/email', { email: 'iris@example.com' })).status).toBe(200)
    const removed = await change(web, '')
    expect(removed.status).toBe(303)
    expect((await web.get(removed.headers.get('location')!)).text).toContain('Your contact e-mail was removed.')
    expect(await emailOf('iris')).toBeNull()
    await expect.poll(() => mailsTo('iris@example.com').length, { timeout: 10_000 }).toBe(1)
    expect(mailsTo('iris@example.com')[0]!.text).toContain('The contact e-mail of the kigo account iris was removed.')
  })

  it('refuses a token that is not whole or too long, a post without the form\'s CSRF token or not a form, without a 5xx', async () => {
    const web = new WebClient(stack.url, stack.fetch)
    for (const q of ['', '?token=', '?token=wrong', `?token=${'a'.repeat(201)}`, '?token=a&token=b', '?token=%ZZ']) {
      const res = await web.get(`/account/email/verify${q}`)
      expect(res.status, q).toBe(400)
    }
    const csrf = csrfOf((await web.get('/account/forgot')).text)
    expect((await web.post('/account/email/verify', { token: 'wrong' })).status).toBe(403)
    for (const token of ['', 'wrong', 'a'.repeat(201)]) expect((await web.post('/account/email/verify', { csrf_token: csrf, token })).status, token).toBe(400)
    expect((await web.post('/account/email/verify', { csrf_token: csrf })).status).toBe(400)
    const notForm = await stack.fetch(`${stack.url}/account/email/verify`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }, body: '{}' })
    expect(notForm.status).toBeGreaterThanOrEqual(400)
    expect(notForm.status).toBeLessThan(500)
  })
})

const backends = await gatewayDbBackends('contact-email')

describeBackends('contact e-mail links (store)', backends, (backend) => {
  it('keeps only the digest of a token, which works once and within its time', async () => {
    const db = backend().db
    await db.query(`INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('jo', 'Jo', 'x', 'x')`)
    const store = new ContactEmailStore(db)
    const now = Date.now()
    const token = await store.create('jo', 'jo@example.com', 60, now)
    const rows = await db.query<Record<string, unknown>>('SELECT * FROM kigo_gateway.email_verifications')
    expect(JSON.stringify(rows)).not.toContain(token)
    expect(await store.pending('jo', now)).toMatchObject({ email: 'jo@example.com' })
    expect(await store.peek(token, now + 61_000)).toBeNull()
    expect(await store.consume(token, now + 61_000)).toBeNull()
    expect(await store.consume(token, now)).toEqual({ userId: 'jo', email: 'jo@example.com' })
    expect(await store.consume(token, now)).toBeNull()
    expect(await store.pending('jo', now)).toBeNull()
  })
})
