// The mail feature (docs/operations.md#mail): one outbox for everything kigo mails, sent
// off the request path. A feature that mails is given the `Outbox` and only enqueues:
//
//   await outbox.enqueue({ key, kind, labels, to, subject, text, html? })
//
// then reads its rows back with `list`, counts its own outcomes with `observe`, and the
// CLI or operator API runs a pass with `runOnce()`. The semantics (unique keys, leases,
// retries, expiry) are in outbox.ts's header; the sender's in sender.ts's.
import type { Counter } from 'prom-client'
import type { Config } from '../../common/config.js'
import type { Db, Queryable } from '../../common/sql.js'
import { OutboxStore, type OutboxEntry, type OutboxEvent, type OutboxFilter, type OutboxMessage } from './outbox.js'
import { OutboxSender, type OutboxRun } from './sender.js'
import { smtpTransport, type MailTransport } from './smtp.js'

export type { MailMessage, MailOutcome, OutboxEntry, OutboxEvent, OutboxFilter, OutboxMessage, OutboxStatus } from './outbox.js'
export type { OutboxRun } from './sender.js'
export type { MailTransport } from './smtp.js'
export { MailUnavailable, smtpTransport } from './smtp.js'
export { mailMigrations } from './migrations.js'

export interface Outbox {
  /** Whether mail is sent at all (KIGO_SMTP_URL is set); without it rows are only recorded. */
  readonly mailing: boolean
  /**
   * Records a message, in the caller's transaction `tx` when given (`created: false` when
   * its key exists already). The next timed pass sends it; call `nudge()` after (and after
   * `tx` commits) for a mail someone is waiting for.
   */
  enqueue(message: OutboxMessage, tx?: Queryable): Promise<{ created: boolean }>
  /** Many messages in one statement, as `enqueue` each: the keys newly recorded. */
  enqueueAll(messages: readonly OutboxMessage[], tx?: Queryable): Promise<Set<string>>
  /** A pass of this gateway's sender soon, off the caller's path. */
  nudge(): void
  /** One pass now (`kigo notices run`): what it sent and failed, and how many remain unsent. */
  runOnce(): Promise<OutboxRun>
  /** Rows newest first, without bodies. */
  list(filter?: OutboxFilter): Promise<OutboxEntry[]>
  /** Every outcome of the sender, with the row's kind and labels. */
  observe(observer: (event: OutboxEvent) => void): void
  /** The timed passes (mail.sendIntervalSeconds). */
  start(): void
  /** Stops the timer and waits for a pass in progress. */
  close(): Promise<void>
}

export interface OutboxOptions {
  /** In place of the SMTP server of config.mail (tests). Null: nothing is mailed. */
  transport?: MailTransport | null
  now?: () => number
  /** kigo_mail_total (the gateway's metrics): counted by kind and outcome. */
  counter?: Pick<Counter<'kind' | 'outcome'>, 'inc'>
  onPassError?: (err: unknown) => void
}

/** The settings the outbox reads (docs/operations.md#mail). */
export interface OutboxConfig {
  secretKey: string
  mail: Pick<Config['mail'], 'smtpUrl' | 'from' | 'sendIntervalSeconds' | 'sendTimeoutSeconds' | 'retryBaseSeconds' | 'retryMaxSeconds'>
}

/** The outbox on the gateway's database, sending through config.mail's SMTP server. */
export function openOutbox(db: Db, config: OutboxConfig, o: OutboxOptions = {}): Outbox {
  const mail = config.mail
  const now = o.now ?? Date.now
  const store = new OutboxStore(db, config.secretKey, now)
  const transport = o.transport !== undefined ? o.transport : mail.smtpUrl === null ? null : smtpTransport(mail.smtpUrl, mail.from, mail.sendTimeoutSeconds * 1000)
  const sender = new OutboxSender(store, {
    transport,
    sendTimeoutMs: mail.sendTimeoutSeconds * 1000,
    retryBaseMs: mail.retryBaseSeconds * 1000,
    retryMaxMs: Math.max(mail.retryMaxSeconds, mail.retryBaseSeconds) * 1000,
    intervalMs: mail.sendIntervalSeconds * 1000,
    now,
    ...(o.onPassError ? { onPassError: o.onPassError } : {}),
  })
  const counter = o.counter
  if (counter) sender.observe((e) => counter.inc({ kind: e.kind, outcome: e.outcome }))
  return {
    mailing: sender.mailing,
    enqueue: (message, tx) => store.enqueue(message, tx),
    enqueueAll: (messages, tx) => store.enqueueAll(messages, tx),
    nudge: () => sender.nudge(),
    runOnce: () => sender.runOnce(),
    list: (filter) => store.list(filter),
    observe: (observer) => sender.observe(observer),
    start: () => sender.start(),
    close: () => sender.close(),
  }
}
