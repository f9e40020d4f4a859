// The outbox (src/gateway/mail/) on each storage backend, sending to a real SMTP server
// started here: a message is mailed once, a key enqueued twice is one message, a failure
// is kept with its error and retried with backoff until the server is back, a claim whose
// sender died is taken over after its lease (and counted), a past expiry is not sent,
// and without an SMTP server nothing is mailed and the rows stay. The clock is the test's:
// leases and backoff are read from it.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { createMetrics } from '../../../src/gateway/metrics/metrics.js'
import { openOutbox, type Outbox, type OutboxConfig, type OutboxEvent, type OutboxMessage } from '../../../src/gateway/mail/index.js'
import { OutboxStore } from '../../../src/gateway/mail/outbox.js'
import { describeBackends, gatewayDbBackends } from '../../helpers/backends.js'
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js'

const backends = await gatewayDbBackends('outbox')

const secretKey = 'outbox-contract-secret-key-0123456789abcdef'
const mailConfig = (smtpUrl: string | null): OutboxConfig => ({
  secretKey,
  mail: { smtpUrl, from: 'kigo <no-reply@kigo.test>', sendIntervalSeconds: 0, sendTimeoutSeconds: 2, retryBaseSeconds: 30, retryMaxSeconds: 3600 },
})

let smtp: TestSmtp
beforeAll(async () => {
  smtp = await startTestSmtp()
})
afterAll(async () => {
  await smtp?.close()
})

let serial = 0
const message = (over: Partial<OutboxMessage> = {}): OutboxMessage => {
  serial += 1
  return { key: `test:${serial}`, kind: 'test', labels: { n: String(serial) }, to: `user${serial}@example.com`, subject: `Message ${serial}`, text: `Body ${serial}: https://kigo.test/link?token=secret${serial}`, ...over }
}

describeBackends('outbox contract', backends, (backend, name) => {
  let clock = Date.parse('2027-01-01T00:00:00Z')
  const now = () => clock
  const opened: Outbox[] = []
  const outbox = (smtpUrl: string | null = smtp.url, metrics?: ReturnType<typeof createMetrics>) => {
    const o = openOutbox(backend().db, mailConfig(smtpUrl), { now, ...(metrics ? { counter: metrics.mailSends } : {}) })
    opened.push(o)
    return o
  }
  const events = (o: Outbox) => {
    const seen: OutboxEvent[] = []
    o.observe((e) => seen.push(e))
    return seen
  }

  beforeEach(async () => {
    await backend().db.query('DELETE FROM kigo_gateway.outbox')
    smtp.mails.length = 0
    smtp.hang = false
    clock += 86_400_000
  })
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()))
  })

  it('mails an enqueued message once, with its text; the stored body is sealed, then erased', async () => {
    const o = outbox()
    const m = message({ html: '<p>Hello</p>' })
    expect(await o.enqueue(m)).toEqual({ created: true })
    const [stored] = await backend().db.query<{ body: string }>('SELECT body FROM kigo_gateway.outbox WHERE key = $1', [m.key])
    expect(stored!.body).not.toContain('secret')
    expect(await o.runOnce()).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)
    expect(smtp.mails[0]!.to).toEqual([m.to])
    expect(smtp.mails[0]!.text).toContain(`Subject: ${m.subject}`)
    expect(smtp.mails[0]!.text).toContain(m.text)
    expect(smtp.mails[0]!.text).toContain('<p>Hello</p>')
    expect(await o.list({ kind: 'test' })).toMatchObject([{ key: m.key, to: m.to, subject: m.subject, status: 'sent', attempts: 1, unconfirmed: 0, lastError: null, sentAt: new Date(clock) }])
    const [after] = await backend().db.query<{ body: string | null }>('SELECT body FROM kigo_gateway.outbox WHERE key = $1', [m.key])
    expect(after!.body).toBeNull()
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)
  })

  it('keeps one message per key: a key enqueued again changes nothing, even after it was sent', async () => {
    const o = outbox()
    const m = message()
    expect(await o.enqueue(m)).toEqual({ created: true })
    expect(await o.enqueue({ ...m, subject: 'Another subject' })).toEqual({ created: false })
    await o.runOnce()
    expect(await o.enqueue(m)).toEqual({ created: false })
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 0 })
    expect(smtp.mails.map((x) => x.text.includes(`Subject: ${m.subject}`))).toEqual([true])
  })

  it('enqueues many in one go as one each: a key known already or given twice is one message, expiry kept', async () => {
    const o = outbox()
    const known = message()
    await o.enqueue(known)
    const [a, b] = [message({ html: '<p>A</p>' }), message({ expiresAt: clock + 60_000 })]
    const created = await o.enqueueAll([a, { ...known, subject: 'Changed' }, b, { ...a, subject: 'Again' }])
    expect([...created].sort()).toEqual([a.key, b.key].sort())
    expect(await o.enqueueAll([])).toEqual(new Set())
    const bodies = await backend().db.query<{ key: string; body: string; expires_at: Date | string | null }>('SELECT key, body, expires_at FROM kigo_gateway.outbox ORDER BY id')
    expect(bodies.map((r) => r.key)).toEqual([known.key, a.key, b.key])
    for (const r of bodies) expect(r.body).not.toContain('secret')
    expect(new Date(bodies[2]!.expires_at!).getTime()).toBe(clock + 60_000)
    expect(await o.runOnce()).toEqual({ sent: 3, failed: 0, pending: 0 })
    const subjects = smtp.mails.map((x) => /Subject: (.*)/.exec(x.text)![1])
    expect(subjects.sort()).toEqual([known.subject, a.subject, b.subject].sort())
    expect(smtp.mails.find((x) => x.text.includes(`Subject: ${a.subject}`))!.text).toContain('<p>A</p>')
    await expect(o.enqueueAll([message(), message({ key: '' })])).rejects.toBeInstanceOf(RangeError)
    expect(await backend().db.query('SELECT key FROM kigo_gateway.outbox')).toHaveLength(3)
  })

  it('enqueues in the caller\'s transaction: rolled back with it, committed with it', async () => {
    const o = outbox()
    const dropped = message()
    await expect(backend().db.transaction(async (tx) => {
      await o.enqueue(dropped, tx)
      throw new Error('the feature\'s own write failed')
    })).rejects.toThrow('own write failed')
    const kept = message()
    await backend().db.transaction(async (tx) => {
      await o.enqueue(kept, tx)
    })
    expect((await o.list()).map((e) => e.key)).toEqual([kept.key])
    expect(await o.runOnce()).toMatchObject({ sent: 1 })
  })

  it('reports each outcome with the kind and labels given, counted in kigo_mail_total; lists filter by them', async () => {
    const metrics = createMetrics({ processMetrics: false })
    const o = outbox(smtp.url, metrics)
    const seen = events(o)
    const a = message({ kind: 'notice', labels: { method: 'basic', step: 'announced' } })
    const b = message({ kind: 'notice', labels: { method: 'wsse', step: 'announced' } })
    await o.enqueue(a)
    await o.enqueue(b)
    await o.runOnce()
    expect(seen).toEqual(expect.arrayContaining([
      { key: a.key, kind: 'notice', labels: { method: 'basic', step: 'announced' }, outcome: 'sent' },
      { key: b.key, kind: 'notice', labels: { method: 'wsse', step: 'announced' }, outcome: 'sent' },
    ]))
    expect(seen).toHaveLength(2)
    expect((await o.list({ labels: { method: 'wsse' } })).map((e) => e.key)).toEqual([b.key])
    expect((await o.list({ kind: 'notice', status: 'sent' })).map((e) => e.key)).toEqual([b.key, a.key])
    expect(await o.list({ status: 'failed' })).toEqual([])
    expect(await metrics.registry.metrics()).toContain('kigo_mail_total{kind="notice",outcome="sent"} 2')
  })

  it('keeps a message while the mail server is away, retries with backoff, and mails it once when it is back', async () => {
    const o = outbox()
    const seen = events(o)
    const m = message()
    await smtp.stop()
    try {
      await o.enqueue(m)
      expect(await o.runOnce()).toEqual({ sent: 0, failed: 1, pending: 1 })
      const [failed] = await o.list({ status: 'failed' })
      expect(failed).toMatchObject({ key: m.key, status: 'failed', attempts: 1, nextAttemptAt: new Date(clock + 30_000) })
      expect(failed!.lastError).toMatch(/ECONNREFUSED|connect/i)
      // Not due before its backoff: nothing is tried.
      clock += 29_000
      expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 1 })
      clock += 1_000
      expect(await o.runOnce()).toEqual({ sent: 0, failed: 1, pending: 1 })
      // The second failure waits twice as long.
      expect((await o.list())[0]).toMatchObject({ attempts: 2, nextAttemptAt: new Date(clock + 60_000) })
      clock += 60_000
      expect(await o.runOnce()).toEqual({ sent: 0, failed: 1, pending: 1 })
      expect((await o.list())[0]).toMatchObject({ attempts: 3, nextAttemptAt: new Date(clock + 120_000) })
    } finally {
      await smtp.start()
    }
    clock += 120_000
    expect(await o.runOnce()).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)
    expect(smtp.mails[0]!.text).toContain(m.text)
    expect((await o.list())[0]).toMatchObject({ status: 'sent', attempts: 4, lastError: null })
    expect(seen.map((e) => e.outcome)).toEqual(['failed', 'failed', 'failed', 'sent'])
  })

  it('never waits past the send timeout on a mail server that accepts and never answers; the message is retried', async () => {
    const o = outbox()
    const m = message()
    smtp.hang = true
    await o.enqueue(m)
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 1, pending: 1 })
    expect((await o.list())[0]!.lastError).toMatch(/greeting never received|timed? ?out|took longer/i)
    smtp.hang = false
    clock += 30_000
    expect(await o.runOnce()).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)
  })

  it('takes over a claim whose sender died after its lease, sends the message, and counts the takeover', async () => {
    const o = outbox()
    const seen = events(o)
    const m = message()
    await o.enqueue(m)
    // A sender claims the row and is killed before it confirms anything.
    const dead = await new OutboxStore(backend().db, secretKey, now).claim(8_000)
    expect(dead?.key).toBe(m.key)
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 1 })
    expect(smtp.mails).toHaveLength(0)
    clock += 8_000
    expect(await o.runOnce()).toEqual({ sent: 1, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(1)
    expect(seen.map((e) => e.outcome)).toEqual(['unconfirmed', 'sent'])
    expect((await o.list())[0]).toMatchObject({ status: 'sent', attempts: 2, unconfirmed: 1 })
    // The dead sender's late confirmation changes nothing.
    await new OutboxStore(backend().db, secretKey, now).markFailed(dead!, 'late', clock)
    expect((await o.list())[0]).toMatchObject({ status: 'sent', lastError: null })
  })

  it('does not send a message past the expiry its sender gave; it is listed as expired', async () => {
    const o = outbox()
    const seen = events(o)
    const m = message({ expiresAt: clock + 1_000 })
    await smtp.stop()
    try {
      await o.enqueue(m)
      expect(await o.runOnce()).toMatchObject({ failed: 1 })
    } finally {
      await smtp.start()
    }
    clock += 30_000
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 0 })
    expect(smtp.mails).toHaveLength(0)
    expect(await o.list({ status: 'expired' })).toMatchObject([{ key: m.key, status: 'expired' }])
    expect(seen.map((e) => e.outcome)).toEqual(['failed', 'expired'])
  })

  it('without an SMTP server mails nothing and keeps every row pending', async () => {
    const o = outbox(null)
    expect(o.mailing).toBe(false)
    await o.enqueue(message())
    await o.enqueue(message())
    expect(await o.runOnce()).toEqual({ sent: 0, failed: 0, pending: 2 })
    expect(smtp.mails).toHaveLength(0)
    expect((await o.list({ status: 'pending' })).map((e) => e.attempts)).toEqual([0, 0])
    // A gateway that has one sends them.
    expect(await outbox().runOnce()).toEqual({ sent: 2, failed: 0, pending: 0 })
  })

  it(`two senders sending at once mail every message exactly once (${name})`, async () => {
    const a = outbox()
    const b = outbox()
    const keys: string[] = []
    for (let i = 0; i < 40; i += 1) {
      const m = message({ to: `many${i}@example.com` })
      keys.push(m.key)
      await a.enqueue(m)
    }
    const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()])
    expect(ra.sent + rb.sent).toBe(40)
    expect(ra.failed + rb.failed).toBe(0)
    expect(smtp.mails.map((x) => x.to[0]).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `many${i}@example.com`).sort())
    expect((await a.list({ status: 'sent', limit: 1000 })).every((e) => e.attempts === 1 && e.unconfirmed === 0)).toBe(true)
  })
})
