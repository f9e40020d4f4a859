// The outbox (docs/operations.md#mail): every mail kigo sends is first a row here, in the
// gateway's store, and is sent later, off the request path, by whichever gateway runs the
// sender (sender.ts). This file is the interface the features that mail build on
// (the password reset, contact e-mail verification, migration notices) and the store.
//
// Semantics:
// - One row per message, unique by `key`, which the caller chooses: a notice's
//   `notice:<user>:<method>:<step>`, a reset's own random key. Enqueueing a key again
//   changes nothing and says so (`created: false`), so a step enqueued twice by two
//   gateways is mailed once. `enqueue` takes the caller's transaction, so a feature can
//   record its own row and the message together.
// - `kind` and `labels` are the caller's: the sender reports every outcome with them
//   (`observe`), so a feature counts its own metrics (kigo_notices_total{method,step,
//   outcome}) from the labels it gave; `list` filters by them.
// - A row is pending until it is sent. A failed attempt keeps the row with its error and
//   attempts and retries it with exponential backoff; nothing is ever dropped because the
//   mail server is away. The one exception is the caller's: a message given `expiresAt`
//   (a link that stops working) is not sent after it and becomes `expired`.
// - A sender claims a row with a lease (next_attempt_at moved to the lease's end, and its
//   claim written), in one statement that skips rows other senders hold (FOR UPDATE SKIP
//   LOCKED, on PostgreSQL and PGlite alike). A row claimed and never confirmed (the
//   process was killed mid-send) is due again when the lease runs out: that message may go
//   out twice, the only one that can, and the takeover is counted (`unconfirmed`).
// - The body is sealed under the secret key (a reset link is a secret) and erased once
//   sent; recipient, subject, kind and labels stay for the operator's listing.
import { randomUUID } from 'node:crypto'
import type { Db, Queryable } from '../../common/sql.js'
import { SecretBox } from '../store/crypto.js'

/** A mail as it is handed to the SMTP server. */
export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
}

/** What a feature enqueues. */
export interface OutboxMessage extends MailMessage {
  /** Unique per message; enqueueing the same key again changes nothing. At most 200 characters. */
  key: string
  /** What sort of mail (`password_reset`, `email_verify`, `email_changed`, `notice`): a label of every metric. */
  kind: string
  /** The feature's own labels (e.g. `{ method, step }`), given back with every outcome; short strings. */
  labels?: Record<string, string>
  /** Not sent after this instant (ms since the epoch): the row becomes `expired`. */
  expiresAt?: number
}

/**
 * Where a message stands: `pending` (not tried yet, or waiting for its retry after a
 * failure; `failed` in listings when its last attempt failed), `sent`, or `expired`.
 */
export type OutboxStatus = 'pending' | 'failed' | 'sent' | 'expired'

export interface OutboxEntry {
  id: number
  key: string
  kind: string
  labels: Record<string, string>
  to: string
  subject: string
  status: OutboxStatus
  createdAt: Date
  sentAt: Date | null
  expiresAt: Date | null
  nextAttemptAt: Date
  attempts: number
  /** Claims that ran out without a result: the message may have been sent that many times more. */
  unconfirmed: number
  lastError: string | null
}

export interface OutboxFilter {
  kind?: string
  /** Rows whose labels include all of these. */
  labels?: Record<string, string>
  to?: string
  status?: OutboxStatus
  /** Newest first; default 100, at most 1000. */
  limit?: number
}

/** A row a sender holds: the message to send, and what it needs to confirm it. */
export interface ClaimedMessage {
  id: number
  key: string
  kind: string
  labels: Record<string, string>
  message: MailMessage
  claim: string
  attempts: number
  expiresAt: number | null
  /** This claim took over one that ran out unconfirmed (the message may have gone out already). */
  tookOver: boolean
}

/** The outcome of one claimed row, as `observe` reports it. */
export type MailOutcome = 'sent' | 'failed' | 'expired' | 'unconfirmed'

export interface OutboxEvent {
  key: string
  kind: string
  labels: Record<string, string>
  outcome: MailOutcome
}

/** The largest error text kept per row. */
const maxErrorChars = 500

const at = (ms: number) => new Date(ms).toISOString()
const date = (v: unknown) => (v instanceof Date ? v : new Date(v as string))
const dateOrNull = (v: unknown) => (v === null || v === undefined ? null : date(v))

interface Row {
  id: string | number
  key: string
  kind: string
  labels: Record<string, string>
  recipient: string
  subject: string
  status: 'pending' | 'sent' | 'expired'
  created_at: unknown
  sent_at: unknown
  expires_at: unknown
  next_attempt_at: unknown
  attempts: number
  unconfirmed: number
  last_error: string | null
}

export class OutboxStore {
  private readonly box: SecretBox

  constructor(
    private readonly db: Db,
    secretKey: string,
    private readonly now: () => number = Date.now,
  ) {
    this.box = new SecretBox(secretKey)
  }

  private sealedBody(key: string, m: MailMessage): string {
    return this.box.seal(JSON.stringify({ text: m.text, ...(m.html === undefined ? {} : { html: m.html }) }), `kigo_gateway.outbox:${key}`)
  }

  /**
   * Records a message to send, due at once; in `tx` when given (the caller's transaction).
   * `created` is false when a message with this key exists already (nothing changed).
   */
  async enqueue(m: OutboxMessage, tx?: Queryable): Promise<{ created: boolean }> {
    return { created: (await this.enqueueAll([m], tx)).has(m.key) }
  }

  /**
   * Records many messages in one statement (a notices batch), each as `enqueue` would; in
   * `tx` when given. Returns the keys newly recorded: a key that exists already, or that
   * appears twice in `messages` (the first one wins), changes nothing.
   */
  async enqueueAll(messages: readonly OutboxMessage[], tx?: Queryable): Promise<Set<string>> {
    for (const m of messages) if (m.key === '' || m.key.length > 200) throw new RangeError('an outbox key is 1 to 200 characters')
    if (messages.length === 0) return new Set()
    const now = at(this.now())
    const rows = await (tx ?? this.db).query<{ key: string }>(
      `INSERT INTO kigo_gateway.outbox (key, kind, labels, recipient, subject, body, created_at, expires_at, next_attempt_at)
       SELECT m.key, m.kind, m.labels::jsonb, m.recipient, m.subject, m.body, $8::timestamptz, m.expires_at, $8::timestamptz
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         WITH ORDINALITY AS m(key, kind, labels, recipient, subject, body, expires_at, n)
       ORDER BY m.n
       ON CONFLICT (key) DO NOTHING RETURNING key`,
      [
        messages.map((m) => m.key),
        messages.map((m) => m.kind),
        messages.map((m) => JSON.stringify(m.labels ?? {})),
        messages.map((m) => m.to),
        messages.map((m) => m.subject),
        messages.map((m) => this.sealedBody(m.key, m)),
        messages.map((m) => (m.expiresAt === undefined ? null : at(m.expiresAt))),
        now,
      ],
    )
    return new Set(rows.map((r) => r.key))
  }

  /**
   * Claims the most overdue pending row for `leaseMs`, or null when none is due. Another
   * sender's claim in progress is skipped; one whose lease ran out is taken over.
   */
  async claim(leaseMs: number): Promise<ClaimedMessage | null> {
    const now = this.now()
    const claim = randomUUID()
    const rows = await this.db.query<Row & { body: string | null; took_over: boolean }>(
      `WITH due AS (
         SELECT id, claim IS NOT NULL AS took_over FROM kigo_gateway.outbox
         WHERE status = 'pending' AND next_attempt_at <= $1
         ORDER BY next_attempt_at, id LIMIT 1
         FOR UPDATE SKIP LOCKED
       )
       UPDATE kigo_gateway.outbox o
       SET next_attempt_at = $2, claim = $3, attempts = o.attempts + 1, last_attempt_at = $1,
           unconfirmed = o.unconfirmed + CASE WHEN due.took_over THEN 1 ELSE 0 END
       FROM due WHERE o.id = due.id
       RETURNING o.id, o.key, o.kind, o.labels, o.recipient, o.subject, o.body, o.attempts, o.expires_at, due.took_over`,
      [at(now), at(now + leaseMs), claim],
    )
    const row = rows[0]
    if (!row) return null
    const body = row.body === null ? { text: '' } : (JSON.parse(this.box.open(row.body, `kigo_gateway.outbox:${row.key}`)) as { text: string; html?: string })
    return {
      id: Number(row.id),
      key: row.key,
      kind: row.kind,
      labels: row.labels,
      message: { to: row.recipient, subject: row.subject, ...body },
      claim,
      attempts: row.attempts,
      expiresAt: row.expires_at === null ? null : date(row.expires_at).getTime(),
      tookOver: row.took_over,
    }
  }

  /** The message went out: sent, its body erased. True unless it was marked sent already (by a sender that took it over). */
  async markSent(c: ClaimedMessage): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE kigo_gateway.outbox SET status = 'sent', sent_at = $2, body = NULL, claim = NULL, last_error = NULL WHERE id = $1 AND status = 'pending' RETURNING id`,
      [c.id, at(this.now())],
    )
    return rows.length === 1
  }

  /** The attempt failed: kept with its error, due again at `retryAt`, unless another sender holds it now. */
  async markFailed(c: ClaimedMessage, error: string, retryAt: number): Promise<void> {
    await this.db.query(
      `UPDATE kigo_gateway.outbox SET claim = NULL, last_error = $3, next_attempt_at = $4 WHERE id = $1 AND claim = $2 AND status = 'pending'`,
      [c.id, c.claim, error.slice(0, maxErrorChars), at(retryAt)],
    )
  }

  /** Past its `expiresAt`: never sent, its body erased. */
  async markExpired(c: ClaimedMessage): Promise<void> {
    await this.db.query(`UPDATE kigo_gateway.outbox SET status = 'expired', body = NULL, claim = NULL WHERE id = $1 AND claim = $2 AND status = 'pending'`, [c.id, c.claim])
  }

  /** Messages not sent yet (pending or failed, not expired). */
  async pendingCount(): Promise<number> {
    const rows = await this.db.query<{ n: string | number }>(`SELECT count(*) AS n FROM kigo_gateway.outbox WHERE status = 'pending'`)
    return Number(rows[0]?.n ?? 0)
  }

  /** Rows, newest first, without their bodies. */
  async list(filter: OutboxFilter = {}): Promise<OutboxEntry[]> {
    const where: string[] = []
    const params: unknown[] = []
    const param = (v: unknown) => {
      params.push(v)
      return `$${params.length}`
    }
    if (filter.kind !== undefined) where.push(`kind = ${param(filter.kind)}`)
    if (filter.to !== undefined) where.push(`recipient = ${param(filter.to)}`)
    if (filter.labels !== undefined) where.push(`labels @> ${param(JSON.stringify(filter.labels))}::jsonb`)
    if (filter.status === 'sent' || filter.status === 'expired') where.push(`status = ${param(filter.status)}`)
    else if (filter.status === 'failed') where.push(`status = 'pending' AND last_error IS NOT NULL`)
    else if (filter.status === 'pending') where.push(`status = 'pending' AND last_error IS NULL`)
    const limit = Number.isInteger(filter.limit) ? Math.min(Math.max(filter.limit!, 1), 1000) : 100
    const rows = await this.db.query<Row>(
      `SELECT id, key, kind, labels, recipient, subject, status, created_at, sent_at, expires_at, next_attempt_at, attempts, unconfirmed, last_error
       FROM kigo_gateway.outbox ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit}`,
      params,
    )
    return rows.map((r) => ({
      id: Number(r.id),
      key: r.key,
      kind: r.kind,
      labels: r.labels,
      to: r.recipient,
      subject: r.subject,
      status: r.status === 'pending' && r.last_error !== null ? 'failed' : r.status,
      createdAt: date(r.created_at),
      sentAt: dateOrNull(r.sent_at),
      expiresAt: dateOrNull(r.expires_at),
      nextAttemptAt: date(r.next_attempt_at),
      attempts: r.attempts,
      unconfirmed: r.unconfirmed,
      lastError: r.last_error,
    }))
  }
}
