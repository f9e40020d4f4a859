// Mail on demand (docs/security.md#mail-on-demand), from the attacker's side over HTTP,
// the mails counted at a real SMTP server: a flood of anonymous reset requests for one
// user mails one link per 15 minutes (every answer the same), a signed-in user cannot
// make kigo mail more than 5 confirmation links a day, per user and per recipient, and
// both budgets hold across two gateways of one store. Refusals are counted in metrics.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf } from '../provider/helpers.js'

const mail = (smtp: TestSmtp) => ({ mail: { smtpUrl: smtp.url, from: 'kigo <no-reply@kigo.test>', sendIntervalSeconds: 1, sendTimeoutSeconds: 5, retryBaseSeconds: 1, retryMaxSeconds: 1 } })
const mailsTo = (smtp: TestSmtp, address: string) => smtp.mails.filter((m) => m.to.includes(address))

/** kigo_mail_budget_refusals_total for `kind` at a gateway. */
async function refusals(stack: Stack, kind: string): Promise<number> {
  const text = await (await fetch(`${stack.adminUrl}/metrics`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })).text()
  const line = text.split('\n').find((l) => l.startsWith(`kigo_mail_budget_refusals_total{kind="${kind}"}`))
  return line === undefined ? Number.NaN : Number(line.split(' ').pop())
}

/** An anonymous "Forgot your password?" for `id` at `stack`: the answer's status and the notice it shows. */
async function forgot(stack: Stack, id: string) {
  const web = new WebClient(stack.url)
  const res = await web.post('/account/forgot', { csrf_token: csrfOf((await web.get('/account/forgot')).text), username: id })
  return { status: res.status, notice: /<div class="notice"[^>]*>([^<]*)</.exec(res.text)?.[1] }
}

describe('one gateway', () => {
  let stack: Stack
  let smtp: TestSmtp
  let offset = 0

  beforeAll(async () => {
    smtp = await startTestSmtp()
    stack = await startStack({ now: () => Date.now() + offset, overrides: mail(smtp) })
  }, 60_000)

  afterAll(async () => {
    await smtp?.close()
    await stack?.close()
  })

  it('25 reset requests for one user mail one link; every answer is the one an unknown ID gets; after 15 minutes another', async () => {
    await stack.addUser('tess')
    expect((await stack.admin('PUT', '/admin/users/tess/email', { email: 'tess@example.test' })).status).toBe(200)
    expect(await refusals(stack, 'password_reset')).toBe(0)
    const unknown = await forgot(stack, 'nobody-here')
    const answers = []
    for (let i = 0; i < 25; i++) answers.push(await forgot(stack, 'tess'))
    for (const a of answers) expect(a).toEqual(unknown)
    await expect.poll(() => refusals(stack, 'password_reset'), { timeout: 10_000 }).toBe(24)
    await expect.poll(() => mailsTo(smtp, 'tess@example.test').length, { timeout: 10_000 }).toBe(1)
    offset += 15 * 60_000 + 1000
    expect(await forgot(stack, 'tess')).toEqual(unknown)
    await expect.poll(() => mailsTo(smtp, 'tess@example.test').length, { timeout: 10_000 }).toBe(2)
    expect(await refusals(stack, 'password_reset')).toBe(24)
  })

  it('20 changes of contact e-mail to strangers mail 5 confirmation links; then 429, nothing saved', async () => {
    const user = await stack.addUser('ugo')
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', 'ugo', user.password)).status).toBe(303)
    const csrf = csrfOf((await web.get('/account')).text)
    const statuses: number[] = []
    for (let i = 0; i < 20; i++) statuses.push((await web.post('/account/email', { csrf_token: csrf, email: `stranger${i}@example.test`, current_password: user.password })).status)
    expect(statuses).toEqual([...Array(5).fill(303), ...Array(15).fill(429)])
    const refused = await web.post('/account/email', { csrf_token: csrf, email: 'one-more@example.test', current_password: user.password })
    expect(refused.text).toContain('Too many confirmation mails were sent for this account or to this address today.')
    await expect.poll(() => smtp.mails.filter((m) => m.to.some((to) => to.startsWith('stranger'))).length, { timeout: 10_000 }).toBe(5)
    expect((await web.get('/account')).text).toContain('Waiting for confirmation: <strong>stranger4@example.test</strong>')
    expect(await refusals(stack, 'email_verify')).toBe(16)
  })

  it('one address gets at most 5 confirmation links a day, whoever asks', async () => {
    const statuses: number[] = []
    for (const id of ['vera', 'walt', 'xena']) {
      const user = await stack.addUser(id)
      const web = new WebClient(stack.url)
      expect((await web.signIn('/account/login', id, user.password)).status).toBe(303)
      const csrf = csrfOf((await web.get('/account')).text)
      for (let i = 0; i < 2; i++) statuses.push((await web.post('/account/email', { csrf_token: csrf, email: 'Victim@Example.test', current_password: user.password })).status)
    }
    expect(statuses).toEqual([303, 303, 303, 303, 303, 429])
    await expect.poll(() => smtp.mails.filter((m) => m.to.some((to) => to.toLowerCase() === 'victim@example.test')).length, { timeout: 10_000 }).toBe(5)
  })
})

const pg = await freshPostgres()

describe.skipIf(!pg)('two gateways of one store', () => {
  let a: Stack
  let b: Stack
  let smtp: TestSmtp

  beforeAll(async () => {
    smtp = await startTestSmtp()
    const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url'), overrides: mail(smtp) }
    a = await startStack(shared)
    b = await startStack({ ...shared, coreUrl: a.coreUrl })
  }, 60_000)

  afterAll(async () => {
    await b?.close()
    await a?.close()
    await smtp?.close()
    await pg?.drop()
  })

  it('reset requests spread over both gateways still mail one link', async () => {
    await a.addUser('yuri')
    expect((await a.admin('PUT', '/admin/users/yuri/email', { email: 'yuri@example.test' })).status).toBe(200)
    for (let i = 0; i < 10; i++) expect((await forgot(i % 2 === 0 ? a : b, 'yuri')).status).toBe(200)
    await expect.poll(async () => (await refusals(a, 'password_reset')) + (await refusals(b, 'password_reset')), { timeout: 10_000 }).toBe(9)
    await expect.poll(() => mailsTo(smtp, 'yuri@example.test').length, { timeout: 10_000 }).toBe(1)
  })
})
