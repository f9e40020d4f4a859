// What the notices need of the mail outbox (src/gateway/mail/): queue a message under a
// unique key in the caller's transaction, run one sending pass, and say what became of
// messages by key (docs/gateway.md#migration-notices).
import type { Queryable } from '../../common/sql.js'

export interface OutboxStatus {
  status: 'pending' | 'sent' | 'failed'
  sentAt: number | null
  attempts: number
  lastError: string | null
}

export interface NoticeOutbox {
  /** Queues the message on `tx`; a key already queued is left as it is. */
  enqueue(tx: Queryable, message: { key: string; to: string; subject: string; text: string; html: string }): Promise<void>
  /** One sending pass now. */
  runOnce(): Promise<{ sent: number; failed: number; pending: number }>
  /** What became of the messages of these keys. */
  status(keys: string[]): Promise<Map<string, OutboxStatus>>
  /** Tells `listener` of each delivery attempt's outcome, by message key (kigo_notices_total). */
  onDelivery?(listener: (key: string, outcome: 'sent' | 'failed') => void): void
}
