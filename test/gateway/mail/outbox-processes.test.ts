// The outbox across real gateway processes (production mode, one PostgreSQL): two gateways
// both run the sender and every mail arrives exactly once; a gateway killed with SIGKILL
// while its sender holds a mail (the mail server accepted the connection and said nothing)
// loses nothing: another gateway sends it after the lease, once here, and counts the
// takeover. The mails are password resets asked for over HTTP; the mail server is real.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnApp, waitReady, type AppProcess } from '../../../bench/processes.js'
import { freshPostgres } from '../../helpers/services.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'
import { stackEnv } from '../../helpers/stack.js'
import { WebClient, csrfOf } from '../provider/helpers.js'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const mainJs = join(root, 'dist/src/main.js')
const pgDb = await freshPostgres()

interface Gateway {
  app: AppProcess
  url: string
  adminUrl: string
}

describe.skipIf(!pgDb)('the outbox across gateway processes on one PostgreSQL', () => {
  let work: string
  let smtp: TestSmtp
  const secretKey = randomBytes(32).toString('base64')
  const adminToken = randomBytes(24).toString('base64url')
  const running: AppProcess[] = []

  beforeAll(async () => {
    const build = spawnSync(process.execPath, ['bin/build.js', '--if-stale'], { cwd: root, encoding: 'utf8', timeout: 170_000 })
    if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`)
    work = mkdtempSync(join(tmpdir(), 'kigo-outbox-'))
    smtp = await startTestSmtp()
  }, 180_000)

  afterAll(async () => {
    for (const app of running) await app.stop()
    await smtp?.close()
    await pgDb?.drop()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  /** A gateway process passing every second, retrying a failure after 1 s; a send may take `sendTimeoutSeconds` (its lease is four times that). */
  async function gateway(name: string, sendTimeoutSeconds = 2): Promise<Gateway> {
    writeFileSync(join(work, `${name}.json`), JSON.stringify({ mail: { sendIntervalSeconds: 1, sendTimeoutSeconds, retryBaseSeconds: 1, retryMaxSeconds: 1 } }))
    const { env, gatewayPort, adminPort } = await stackEnv(join(work, name), {
      DATABASE_URL: pgDb!.url,
      KIGO_SECRET_KEY: secretKey,
      KIGO_ADMIN_TOKEN: adminToken,
      KIGO_CONFIG: join(work, `${name}.json`),
      KIGO_SMTP_URL: smtp.url,
      KIGO_GATEWAY_BIND: '127.0.0.1',
      LOG_LEVEL: 'warn',
    })
    const app = spawnApp(name, [mainJs, 'gateway'], { PATH: process.env.PATH, ...env })
    running.push(app)
    const g = { app, url: `http://localhost:${gatewayPort}`, adminUrl: `http://127.0.0.1:${adminPort}` }
    await waitReady(app, `${g.url}/healthz`)
    return g
  }

  const admin = async (g: Gateway, method: string, path: string, body: unknown) => {
    const res = await fetch(g.adminUrl + path, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(res.status).toBeLessThan(300)
  }

  const askReset = async (g: Gateway, user: string) => {
    const web = new WebClient(g.url)
    const page = await web.get('/account/forgot')
    const res = await web.post('/account/forgot', { csrf_token: csrfOf(page.text), username: user })
    expect(res.status).toBe(200)
  }

  const mailCounter = async (g: Gateway, outcome: string) => {
    const text = await (await fetch(`${g.adminUrl}/metrics`)).text()
    const line = text.split('\n').find((l) => l.startsWith(`kigo_mail_total{kind="password_reset",outcome="${outcome}"}`))
    return line === undefined ? 0 : Number(line.split(' ').pop())
  }

  const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address)).length

  it('two gateways both sending: every mail arrives exactly once', async () => {
    const [a, b] = await Promise.all([gateway('a'), gateway('b')])
    const users = Array.from({ length: 24 }, (_, i) => `many${i}`)
    for (const id of users) {
      await admin(a, 'POST', '/admin/users', { id })
      await admin(a, 'PUT', `/admin/users/${id}/email`, { email: `${id}@example.com` })
    }
    // Each gateway takes half the requests and nudges its own sender; both also pass every second.
    await Promise.all(users.map((id, i) => askReset(i % 2 === 0 ? a : b, id)))
    await expect.poll(() => smtp.mails.length, { timeout: 30_000 }).toBe(users.length)
    await sleep(3_000)
    expect(smtp.mails.length).toBe(users.length)
    for (const id of users) expect(mailsTo(`${id}@example.com`)).toBe(1)
    expect((await mailCounter(a, 'sent')) + (await mailCounter(b, 'sent'))).toBe(users.length)
    expect((await mailCounter(a, 'unconfirmed')) + (await mailCounter(b, 'unconfirmed'))).toBe(0)
    await Promise.all([a.app.stop(), b.app.stop()])
  }, 120_000)

  it('a gateway killed with SIGKILL while its sender holds a mail: another gateway sends it after the lease, once, and counts it', async () => {
    // A send may take 6 s (lease 24 s): the kill comes while the claim is held, even on a busy machine.
    const a = await gateway('killed', 6)
    await admin(a, 'POST', '/admin/users', { id: 'killme' })
    await admin(a, 'PUT', '/admin/users/killme/email', { email: 'killme@example.com' })
    smtp.hang = true
    try {
      await askReset(a, 'killme')
      // The sender has claimed the mail and is waiting on the mail server.
      await expect.poll(() => smtp.open, { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
      process.kill(a.app.pid, 'SIGKILL')
      await expect.poll(() => a.app.exited(), { timeout: 10_000 }).toBe(true)
    } finally {
      smtp.hang = false
      smtp.release()
    }
    expect(mailsTo('killme@example.com')).toBe(0)
    const b = await gateway('survivor')
    await expect.poll(() => mailsTo('killme@example.com'), { timeout: 60_000 }).toBe(1)
    await sleep(3_000)
    expect(mailsTo('killme@example.com')).toBe(1)
    // The takeover is counted: this mail is the one that could have gone out twice.
    expect(await mailCounter(b, 'unconfirmed')).toBe(1)
    expect(await mailCounter(b, 'sent')).toBe(1)
  }, 120_000)
})
