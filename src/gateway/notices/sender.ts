// The notices' pass (docs/gateway.md#migration-notices): decides who is told what now
// (rules.ts), records each step told and queues the message in the mail outbox in the same
// transaction, then lets the outbox send. Every gateway runs it every
// notices.intervalSeconds; one at a time decides (a lease in the store), and the outbox
// sends each message once. A recipient gets one message per pass, covering every method
// they are due a step of; the preview composes it the same way (compose below), so that
// what the operator reads is what is sent.
//
// What a pass reads: per method with steps due, the users whose usage rows were seen
// since the method's last sweep (a few minutes' margin for the usage flush), then those
// users' own rows, told steps and OAuth rows for every method with steps due, in batches.
// The whole lookback is read again only when the steps due (or their dates) change: when a
// method is put under notice, 7 days and 1 day before its refusal date, when that date
// moves, and when a deny takes effect. A pass with nothing due reads one sweep row per
// method.
import { createHash, randomBytes } from 'node:crypto'
import { baseUrl, type Deployment, type Hosts } from '../../common/deployment.js'
import { isoSeconds } from '../../common/time.js'
import type { Db } from '../../common/sql.js'
import { exceptionEnd } from '../policy/evaluate.js'
import { legacyMethods, type LegacyMethod, type Policies } from '../policy/types.js'
import { movedRule, oauth1Rule } from '../usage/moved.js'
import { oauth1Applications } from './oauth1.js'
import { renderNotice, type NoticeClient, type NoticeMessage, type NoticeTemplates } from './message.js'
import { dueSignature, dueSteps, recipientSteps, toldDate, toldNothing, type DueSteps, type NoticeStep, type RecipientClient } from './rules.js'
import type { NoticeRecord, NoticeStore, Recipient, RecipientRow } from './store.js'
import type { Outbox } from '../mail/index.js'

export interface NoticeSenderOptions {
  db: Db
  store: NoticeStore
  policies: () => Policies
  outbox: Pick<Outbox, 'enqueueAll'>
  /** The deployments' hosts: a notice's links name the deployment its recipient's legacy requests came through. */
  hosts: Hosts
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
  /** The date this part tells requests are refused from (recorded with its steps); null when none is set. */
  refusalAt: number | null
  /** What begins at the refusal date (a brownout window or the deny); null when none is scheduled. */
  refusal: 'brownout' | 'deny' | null
  /** The deployment of the part's latest legacy request. */
  deployment: Deployment
}

/** One recipient's message of a pass: its parts (one per method with steps due) and what it says. */
export interface ComposedNotice {
  recipient: Recipient
  parts: RecipientNotice[]
  message: NoticeMessage
}

/** The outbox key of a notice message: unique per (recipient, the steps of each method, the dates a date_moved tells). */
export function noticeKey(user: string, parts: ReadonlyArray<Pick<RecipientNotice, 'method' | 'steps' | 'refusalAt'>>): string {
  const what = parts.map((p) => `${p.method}=${p.steps.join('+')}${p.steps.includes('date_moved') && p.refusalAt !== null ? `@${isoSeconds(p.refusalAt)}` : ''}`).join(',')
  const readable = `notice:${user}:${what}`
  return readable.length <= 200 ? readable : `notice:${user.slice(0, 100)}:${createHash('sha256').update(readable).digest('base64url')}`
}

/** The outbox kind of every notice; its labels are the recipient and the steps per method (`basic=announced+reminder_7d wsse=announced`). */
export const noticeKind = 'notice'

/** The steps per method of a message's labels, as `noticeLabels` wrote them. */
export function labelledSteps(labels: Record<string, string>): Array<{ method: string; step: string }> {
  return (labels.parts ?? '').split(' ').filter((p) => p !== '').flatMap((p) => {
    const [method, steps] = p.split('=') as [string, string | undefined]
    return (steps ?? '').split('+').map((step) => ({ method, step }))
  })
}

const noticeLabels = (c: ComposedNotice) => ({ user: c.recipient.id, parts: c.parts.map((p) => `${p.method}=${p.steps.join('+')}`).join(' ') })

export class NoticeSender {
  private readonly holder = randomBytes(9).toString('base64url')
  private readonly now: () => number

  constructor(private readonly o: NoticeSenderOptions) {
    this.now = o.now ?? Date.now
  }

  /** For each of `recipients`, what they are due for `method` now, with their clients (all of them, moved ones apart). */
  async noticesFor(method: LegacyMethod, due: DueSteps, recipients: string[], now: number, policies: Policies): Promise<RecipientNotice[]> {
    if (method === 'oauth1') return this.oauth1NoticesFor(due, recipients, now, policies)
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
      const steps = recipientSteps(due, told.get(id) ?? toldNothing, judged.map((j) => j.rule))
      const live = judged.filter((j) => !j.rule.moved).sort((a, b) => b.row.lastSeen - a.row.lastSeen || a.row.client.localeCompare(b.row.client))
      const clients = live.map((j) => ({ client: j.row.client, requests: j.row.accepted, lastSeen: j.row.lastSeen, user: j.row.user }))
      out.push({ recipient: person, method, steps, clients, refusalAt: toldDate(due), refusal: due.refusal, deployment: live[0]?.row.deployment ?? 'domestic' })
    }
    return out
  }

  /**
   * oauth1: for each of `recipients` (owners of OAuth 1.0a applications), what they are due
   * now, with their applications not moved (notices/oauth1.ts). An exception for an
   * application (alone) leaves it out of the reminders, as a user's exception does a client.
   */
  private async oauth1NoticesFor(due: DueSteps, recipients: string[], now: number, policies: Policies): Promise<RecipientNotice[]> {
    const { store } = this.o
    const since = now - this.o.lookbackDays * 86_400_000
    const [rows, told, people] = await Promise.all([store.recipientRows('oauth1', recipients, since), store.told('oauth1', recipients), store.recipients(recipients)])
    const facts = await store.oauth1Facts([...new Set(rows.map((r) => r.clientId ?? ''))])
    const apps = oauth1Applications(rows, oauth1Rule(facts))
    const policy = policies.oauth1
    const at = due.refusalAt ?? now
    const out: RecipientNotice[] = []
    for (const id of recipients) {
      const person = people.get(id)
      const own = apps.filter((a) => a.owner === id)
      if (person === undefined || own.length === 0) continue
      const judged = own.map((a) => ({ app: a, rule: { lastSeen: a.lastSeen, refusedByPolicy: a.refusedByPolicy, moved: a.moved, excepted: exceptionEnd(policy, { user: '', application: a.application, client: () => '' }, at) !== null } satisfies RecipientClient }))
      const steps = recipientSteps(due, told.get(id) ?? toldNothing, judged.map((j) => j.rule))
      const live = judged.filter((j) => !j.rule.moved).sort((a, b) => b.app.lastSeen - a.app.lastSeen || a.app.name.localeCompare(b.app.name))
      const clients = live.map((j) => ({ client: j.app.name, requests: j.app.requests, lastSeen: j.app.lastSeen, user: id, application: j.app.application, users: j.app.users }))
      out.push({ recipient: person, method: 'oauth1', steps, clients, refusalAt: toldDate(due), refusal: due.refusal, deployment: live[0]?.app.deployment ?? 'domestic' })
    }
    return out
  }

  /**
   * The message of one recipient's parts due now (those with steps), in the deployment of
   * their latest legacy request among them; null when no part has a step due.
   */
  compose(parts: readonly RecipientNotice[], policies: Policies, now: number): ComposedNotice | null {
    const due = parts.filter((p) => p.steps.length > 0)
    if (due.length === 0) return null
    const latest = (p: RecipientNotice) => p.clients[0]?.lastSeen ?? -Infinity
    const newest = due.reduce((a, b) => (latest(b) > latest(a) ? b : a))
    const message = renderNotice({ recipient: newest.recipient, baseUrl: baseUrl(this.o.hosts, newest.deployment), methods: due.map((p) => ({ method: p.method, steps: p.steps, clients: p.clients, refusal: p.refusal })), policies, now }, this.o.templates)
    return { recipient: newest.recipient, parts: due, message }
  }

  /** Every method's part for each of `users` at `now` (methods with steps due only), by user. */
  private async partsFor(dues: ReadonlyArray<{ method: LegacyMethod; due: DueSteps }>, users: string[], now: number, policies: Policies): Promise<Map<string, RecipientNotice[]>> {
    const byUser = new Map<string, RecipientNotice[]>()
    for (const { method, due } of dues) {
      for (const n of await this.noticesFor(method, due, users, now, policies)) {
        if (!byUser.has(n.recipient.id)) byUser.set(n.recipient.id, [])
        byUser.get(n.recipient.id)!.push(n)
      }
    }
    return byUser
  }

  /** One decision pass: records and queues what is due; nothing when another gateway holds the lease. */
  async decide(): Promise<DecideResult> {
    const { store, db } = this.o
    const result: DecideResult = { queued: 0, unreachable: 0, read: 0, ran: false }
    if (!(await store.claimLease(this.holder, this.now(), leaseMs))) return result
    result.ran = true
    try {
      const started = this.now()
      const policies = this.o.policies()
      const since = started - this.o.lookbackDays * 86_400_000
      // Per method: what is due, and who to read (since its last sweep, or the whole lookback when what is due changed).
      const dues: Array<{ method: LegacyMethod; due: DueSteps; signature: string }> = []
      const candidates = new Set<string>()
      for (const method of legacyMethods) {
        const due = dueSteps(policies[method], started)
        const signature = dueSignature(due)
        const sweep = await store.sweep(method)
        if (due.steps.length === 0) {
          if (sweep !== null && sweep.signature !== signature) await store.setSweep(method, signature, started)
          continue
        }
        dues.push({ method, due, signature })
        const after = sweep !== null && sweep.signature === signature ? sweep.sweptUntil - sweepMarginMs : since
        for (const id of await store.changedRecipients(method, since, after)) candidates.add(id)
      }
      const everyone = [...candidates].sort()
      const batch = this.o.batch ?? 500
      for (let i = 0; i < everyone.length; i += batch) {
        if (!(await store.claimLease(this.holder, this.now(), leaseMs))) throw new Error('notices: the pass lost its lease')
        const byUser = await this.partsFor(dues, everyone.slice(i, i + batch), started, policies)
        result.read += byUser.size
        const telling = [...byUser.values()].flatMap((parts) => {
          const composed = this.compose(parts, policies, started)
          if (composed === null) return []
          const email = composed.recipient.email
          const key = email === null ? null : noticeKey(composed.recipient.id, composed.parts)
          const records: NoticeRecord[] = composed.parts.flatMap((p) => p.steps.map((step) => ({ user: p.recipient.id, method: p.method, step, email, messageKey: key, createdAt: started, refusalAt: p.refusalAt })))
          return [{ composed, email, key, records }]
        })
        if (telling.length === 0) continue
        // One transaction per batch: every step recorded, and every message queued with it.
        const fresh = await db.transaction(async (tx) => {
          const recorded = await store.record(tx, telling.flatMap((d) => d.records))
          const told = new Set(recorded.map((r) => r.user))
          // The batch's messages in one statement: a pass over 10⁵ users is 200 inserts, not 10⁵.
          const messages = telling
            .filter((d) => d.email !== null && told.has(d.composed.recipient.id))
            .map((d) => ({ key: d.key!, kind: noticeKind, labels: noticeLabels(d.composed), to: d.email!, ...d.composed.message }))
          await this.o.outbox.enqueueAll(messages, tx)
          return recorded
        })
        const recipientsTold = new Set(fresh.map((r) => r.user))
        for (const d of telling) {
          if (!recipientsTold.has(d.composed.recipient.id)) continue
          if (d.email === null) result.unreachable += 1
          else result.queued += 1
        }
        for (const r of fresh) this.o.onDecided?.(r.method as LegacyMethod, r.step, r.email === null ? 'unreachable' : 'queued')
      }
      for (const { method, signature } of dues) await store.setSweep(method, signature, started)
    } finally {
      await store.releaseLease(this.holder).catch(() => undefined)
    }
    return result
  }

  /**
   * What `userId` would be told at `at` (default now), without recording or sending: each
   * method's part that applies to them (steps due or not), and the message a pass at that
   * instant would send them (null when it would send none).
   */
  async preview(userId: string, at?: number): Promise<{ notices: RecipientNotice[]; message: NoticeMessage | null }> {
    const now = at ?? this.now()
    const policies = this.o.policies()
    const dues = legacyMethods.map((method) => ({ method, due: dueSteps(policies[method], now) })).filter((d) => d.due.steps.length > 0)
    const notices = ((await this.partsFor(dues, [userId], now, policies)).get(userId) ?? []).filter((n) => n.clients.length > 0)
    return { notices, message: this.compose(notices, policies, now)?.message ?? null }
  }
}
