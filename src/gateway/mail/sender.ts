// The outbox's sender (docs/operations.md#mail): any gateway may run it, each pass claims
// due rows one at a time with a lease (outbox.ts), hands each to the SMTP server and
// confirms it. It runs every `intervalMs` on a timer, after `nudge()` (a feature that
// just enqueued a mail someone waits for), and once on demand (`runOnce`, the CLI's), never
// on a request's path: a slow or absent mail server costs a request nothing.
//
// - Without a transport (no KIGO_SMTP_URL) nothing is claimed or mailed; the rows stay
//   pending, and `runOnce` counts them.
// - A send is bounded by `sendTimeoutMs`; the lease is four times that, so a live sender
//   confirms or fails a row long before another may take it over.
// - A failure is kept on the row with its error and retried after retryBaseMs × 2^(n−1)
//   (n the attempts so far), at most retryMaxMs: never dropped.
// - Every outcome is reported to the observers with the row's kind and labels: `sent`,
//   `failed` (this attempt), `expired` (past the caller's expiresAt, not sent) and
//   `unconfirmed` (a claim taken over after its lease ran out: the message may go out twice).
import { withDeadline } from '../../common/deadline.js'
import type { ClaimedMessage, OutboxEvent, OutboxStore } from './outbox.js'
import type { MailTransport } from './smtp.js'

export interface OutboxSenderOptions {
  /** Null: no mail server is configured and nothing is mailed. */
  transport: MailTransport | null
  /** How long one send may take. */
  sendTimeoutMs: number
  /** The first retry's delay after a failure; doubled after each further one. */
  retryBaseMs: number
  /** The longest delay between two attempts. */
  retryMaxMs: number
  /** A pass every this long; 0: only nudged and on demand. */
  intervalMs: number
  now?: () => number
  /** A pass that could not run (the store away); the timer tries again at its next tick. */
  onPassError?: (err: unknown) => void
}

/** What one pass did: messages sent, attempts that failed, and messages still not sent after it. */
export interface OutboxRun {
  sent: number
  failed: number
  pending: number
}

export class OutboxSender {
  private readonly observers: Array<(event: OutboxEvent) => void> = []
  private timer: NodeJS.Timeout | undefined
  private running: Promise<OutboxRun> | undefined
  private again = false
  private closed = false
  private readonly now: () => number

  constructor(
    private readonly store: OutboxStore,
    private readonly options: OutboxSenderOptions,
  ) {
    this.now = options.now ?? Date.now
  }

  /** The lease of a claim: four sends' time, so a live sender always confirms first. */
  get leaseMs(): number {
    return this.options.sendTimeoutMs * 4
  }

  /** Whether mail is sent at all (an SMTP server is configured). */
  get mailing(): boolean {
    return this.options.transport !== null
  }

  /** Called with every outcome (a feature's own metrics); an observer that throws is ignored. */
  observe(observer: (event: OutboxEvent) => void): void {
    this.observers.push(observer)
  }

  /** Passes every intervalMs from now on (none when 0 or without a transport). */
  start(): void {
    if (this.timer || this.options.intervalMs === 0 || !this.mailing) return
    this.timer = setInterval(() => this.nudge(), this.options.intervalMs)
    this.timer.unref()
  }

  /** A pass soon, off the caller's path; folded into the running pass's successor when one runs. */
  nudge(): void {
    if (this.closed || !this.mailing) return
    if (this.running) {
      this.again = true
      return
    }
    setImmediate(() => {
      this.runOnce().catch((err: unknown) => this.options.onPassError?.(err))
    })
  }

  /** One pass now: every due row is tried once. Waits for a pass in progress first. */
  async runOnce(): Promise<OutboxRun> {
    while (this.running) await this.running.catch(() => undefined)
    const pass = this.pass()
    this.running = pass
    try {
      return await pass
    } finally {
      this.running = undefined
      if (this.again && !this.closed) {
        this.again = false
        this.nudge()
      }
    }
  }

  /**
   * Stops the timer and waits for the pass in progress to finish its send, at most
   * `closeWaitMs` (a shutdown is not held for a mail server that hangs: a send cut short
   * here is retried after its lease, and counted as unconfirmed).
   */
  async close(closeWaitMs = 5000): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    if (this.running) await withDeadline(this.running, closeWaitMs, 'the outbox pass in progress').catch(() => undefined)
  }

  private emit(c: ClaimedMessage, outcome: OutboxEvent['outcome']): void {
    for (const observer of this.observers) {
      try {
        observer({ key: c.key, kind: c.kind, labels: c.labels, outcome })
      } catch {
        // an observer's bug must not stop the mail
      }
    }
  }

  private async pass(): Promise<OutboxRun> {
    const run = { sent: 0, failed: 0 }
    const transport = this.options.transport
    if (transport !== null) {
      for (;;) {
        if (this.closed) break
        const c = await this.store.claim(this.leaseMs)
        if (!c) break
        if (c.tookOver) this.emit(c, 'unconfirmed')
        if (c.expiresAt !== null && c.expiresAt <= this.now()) {
          await this.store.markExpired(c)
          this.emit(c, 'expired')
          continue
        }
        try {
          await withDeadline(transport.send(c.message), this.options.sendTimeoutMs, 'sending a mail')
        } catch (err) {
          const delay = Math.min(this.options.retryBaseMs * 2 ** Math.max(c.attempts - 1, 0), this.options.retryMaxMs)
          await this.store.markFailed(c, (err as Error).message, this.now() + delay)
          run.failed += 1
          this.emit(c, 'failed')
          continue
        }
        await this.store.markSent(c)
        run.sent += 1
        this.emit(c, 'sent')
      }
    }
    return { ...run, pending: await this.store.pendingCount() }
  }
}
