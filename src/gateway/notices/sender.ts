// The notices' pass (docs/gateway.md#migration-notices): decides who is told what now
// (rules.ts), records each (recipient, method, step) once and queues the message in the
// mail outbox in the same transaction, then lets the outbox send. Every gateway runs it
// every notices.intervalSeconds; one at a time decides (a lease in the store), and the
// outbox sends each message once.
//
// What a pass reads: per method with steps due, the users whose usage rows were seen
// since the method's last sweep (a few minutes' margin for the usage flush), then those
// users' own rows, told steps and OAuth rows, in batches. The whole lookback is read again
// only when the steps due (or their dates) change: when a method is put under notice, 7
// days and 1 day before its refusal date, and when a deny takes effect. A pass with
// nothing due reads one sweep row per method.
import { randomBytes } from 'node:crypto'
import type { Db } from '../../common/sql.js'
import { exceptionEnd } from '../policy/evaluate.js'
import { legacyMethods, type LegacyMethod, type Policies } from '../policy/types.js'
import { movedRule } from '../usage/moved.js'
import { renderNotice, type NoticeClient, type NoticeMessage, type NoticeTemplates } from './message.js'
import { dueSignature, dueSteps, recipientSteps, type DueSteps, type NoticeStep, type RecipientClient } from './rules.js'
import type { NoticeRecord, NoticeStore, Recipient, RecipientRow } from './store.js'
import type { Outbox } from '../mail/index.js'

export interface NoticeSenderOptions {
  db: Db
  store: NoticeStore
  policies: () => Policies
  outbox: Pick<Outbox, 'enqueueAll'>
  /** The deployment base URL links point at (scheme and host). */
  baseUrl: string
  lookbackDays: number
  templates?: NoticeTemplates
  now?: () => number
  /** Recipients per batch of reads and writes; default 500. */
  batch?: number
  /** Told of every step decided: unreachable ones (no e-mail) here; sent and failed by the outbox. */
  onDecided?: (method: LegacyMethod, step: NoticeStep, outcome: 'queued' | 'unreachable') => void
}

/** How far before the last sweep a pass reads again: usage reaches the store up to 15 s late, and gateways' clocks differ. */
const sweepMarginMs = 5 * 60_000
/** The lease of one pass, renewed at each batch. */
const leaseMs = 2 * 60_000

export interface DecideResult {
  /** Messages queued. */
  queued: number
  /** Steps recorded for recipients without an e-mail. */
  unreachable: number
  /** Recipients read. */
  read: number
  /** False when another gateway held the lease. */
  ran: boolean
}

/** A recipient's part for one method: the steps due to them and the clients told about. */
export interface RecipientNotice {
  recipient: Recipient
  method: LegacyMethod
  steps: NoticeStep[]
  clients: NoticeClient[]
}

/** The message key of a notice in the outbox: one per (recipient, method, steps). */
export const noticeKey = (user: string, method: string, steps: readonly NoticeStep[]) => `notice:${method}:${user}:${steps.join('+')}`

/** The outbox kind of every notice; its labels are the recipient, the method and the steps (joined by +). */
export const noticeKind = 'notice'

export class NoticeSender {
  private readonly holder = randomBytes(9).toString('base64url')
  private readonly now: () => number

  constructor(private readonly o: NoticeSenderOptions) {
    this.now = o.now ?? Date.now
  }

  /** For each of `recipients`, what they are due for `method` now, with their clients (all of them, moved ones apart). */
  async noticesFor(method: LegacyMethod, due: DueSteps, recipients: string[], now: number, policies: Policies): Promise<RecipientNotice[]> {
    const { store } = this.o
    const since = now - this.o.lookbackDays * 86_400_000
    const [rows, modern, told, people] = await Promise.all([
      store.recipientRows(method, recipients, since),
      store.modernRows(method, recipients),
      store.told(method, recipients),
      store.recipients(recipients),
    ])
    const isMoved = movedRule(modern)
    const byRecipient = new Map<string, RecipientRow[]>()
    for (const r of rows) {
      if (!byRecipient.has(r.recipient)) byRecipient.set(r.recipient, [])
      byRecipient.get(r.recipient)!.push(r)
    }
    const policy = policies[method]
    const out: RecipientNotice[] = []
    for (const id of recipients) {
      const person = people.get(id)
      const own = byRecipient.get(id)
      if (person === undefined || own === undefined) continue
      const at = due.refusalAt ?? now
      const judged = own.map((r) => {
        const moved = isMoved({ method, user: r.user, client: r.client, lastSeen: r.lastSeen, owner: r.recipient })
        const excepted = method !== 'login_api' && exceptionEnd(policy, { user: r.user, client: () => r.client }, at) !== null
        return { row: r, rule: { lastSeen: r.lastSeen, refusedByPolicy: r.refusedByPolicy, moved, excepted } satisfies RecipientClient }
      })
      const steps = recipientSteps(due, told.get(id) ?? new Map(), judged.map((j) => j.rule))
      const clients = judged.filter((j) => !j.rule.moved).map((j) => ({ client: j.row.client, requests: j.row.accepted, lastSeen: j.row.lastSeen, user: j.row.user }))
      clients.sort((a, b) => b.lastSeen - a.lastSeen || a.client.localeCompare(b.client))
      out.push({ recipient: person, method, steps, clients })
    }
    return out
  }

  /** The message for a recipient's notice. */
  message(n: RecipientNotice, policies: Policies, now: number): NoticeMessage {
    return renderNotice({ recipient: n.recipient, baseUrl: this.o.baseUrl, methods: [{ method: n.method, steps: n.steps, clients: n.clients }], policies, now }, this.o.templates)
  }

  /** One decision pass: records and queues what is due; nothing when another gateway holds the lease. */
  async decide(): Promise<DecideResult> {
    const { store } = this.o
    const result: DecideResult = { queued: 0, unreachable: 0, read: 0, ran: false }
    if (!(await store.claimLease(this.holder, this.now(), leaseMs))) return result
    result.ran = true
    try {
      for (const method of legacyMethods) await this.decideMethod(method, result)
    } finally {
      await store.releaseLease(this.holder).catch(() => undefined)
    }
    return result
  }

  private async decideMethod(method: LegacyMethod, result: DecideResult): Promise<void> {
    const { store, db } = this.o
    const started = this.now()
    const policies = this.o.policies()
    const due = dueSteps(policies[method], started)
    const signature = dueSignature(due)
    const sweep = await store.sweep(method)
    if (due.steps.length === 0) {
      if (sweep !== null && sweep.signature !== signature) await store.setSweep(method, signature, started)
      return
    }
    const since = started - this.o.lookbackDays * 86_400_000
    const after = sweep !== null && sweep.signature === signature ? sweep.sweptUntil - sweepMarginMs : since
    const candidates = await store.changedRecipients(method, since, after)
    const batch = this.o.batch ?? 500
    for (let i = 0; i < candidates.length; i += batch) {
      if (!(await store.claimLease(this.holder, this.now(), leaseMs))) throw new Error('notices: the pass lost its lease')
      const notices = await this.noticesFor(method, due, candidates.slice(i, i + batch), started, policies)
      result.read += notices.length
      // One transaction per batch: every step recorded, and every message queued with it.
      const telling = notices.filter((n) => n.steps.length > 0).map((n) => {
        const email = n.recipient.email
        const key = email === null ? null : noticeKey(n.recipient.id, method, n.steps)
        const records: NoticeRecord[] = n.steps.map((step) => ({ user: n.recipient.id, method, step, email, messageKey: key, createdAt: started }))
        return { n, email, key, records }
      })
      if (telling.length === 0) continue
      const fresh = await db.transaction(async (tx) => {
        const recorded = await store.record(tx, telling.flatMap((d) => d.records))
        const told = new Set(recorded.map((r) => r.user))
        // The batch's messages in one statement: a pass over 10⁵ users is 200 inserts, not 10⁵.
        const messages = telling
          .filter((d) => d.email !== null && told.has(d.n.recipient.id))
          .map((d) => ({ key: d.key!, kind: noticeKind, labels: { user: d.n.recipient.id, method, steps: d.n.steps.join('+') }, to: d.email!, ...this.message(d.n, policies, started) }))
        await this.o.outbox.enqueueAll(messages, tx)
        return recorded
      })
      const recipientsTold = new Set(fresh.map((r) => r.user))
      for (const d of telling) {
        if (!recipientsTold.has(d.n.recipient.id)) continue
        if (d.email === null) result.unreachable += 1
        else result.queued += 1
      }
      for (const r of fresh) this.o.onDecided?.(method, r.step, r.email === null ? 'unreachable' : 'queued')
    }
    await store.setSweep(method, signature, started)
  }

  /** What `userId` would be told now for each method (steps due or not), without recording or sending. */
  async preview(userId: string): Promise<{ notices: RecipientNotice[]; message: NoticeMessage | null }> {
    const now = this.now()
    const policies = this.o.policies()
    const notices: RecipientNotice[] = []
    for (const method of legacyMethods) {
      const due = dueSteps(policies[method], now)
      if (due.steps.length === 0) continue
      const [n] = await this.noticesFor(method, due, [userId], now, policies)
      if (n !== undefined && n.clients.length > 0) notices.push(n)
    }
    if (notices.length === 0) return { notices, message: null }
    const message = renderNotice({ recipient: notices[0]!.recipient, baseUrl: this.o.baseUrl, methods: notices.map((n) => ({ method: n.method, steps: n.steps, clients: n.clients })), policies, now }, this.o.templates)
    return { notices, message }
  }
}
