// Migration notices (docs/gateway.md#migration-notices): kigo tells each person who must
// move, from its own usage data and the policy's schedule. This module puts the parts
// together for a gateway: the store, the pass (sender.ts) on a timer, the plan, the list
// and preview the operator API serves, and kigo_notices_total.
import { Counter, type Registry } from 'prom-client'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../common/config.js'
import { isConnectionFailure } from '../../common/errors.js'
import type { Db } from '../../common/sql.js'
import type { PolicyService } from '../policy/service.js'
import type { LegacyMethod, MethodPolicy, PolicyState } from '../policy/types.js'
import { isoSeconds } from '../../common/time.js'
import { hostsOf } from '../../common/deployment.js'
import { loadTemplates, type NoticeMessage } from './message.js'
import type { Outbox, OutboxEntry } from '../mail/index.js'
import { noticeFunnel, type FunnelLine } from './funnel.js'
import { policyPlan, type PolicyPlan } from './plan.js'
import { noticeSteps, type NoticeStep } from './rules.js'
import { NoticeSender, labelledSteps, noticeKind, type DecideResult, type RecipientNotice } from './sender.js'
import { NoticeStore } from './store.js'
import { oauth1Standing } from '../policy/oauth1-standing.js'

export interface NoticesOptions {
  config: Config
  db: Db
  policy: PolicyService
  outbox: Outbox
  /** Where kigo_notices_total is registered. */
  registry?: Registry
  now?: () => number
  logger?: FastifyBaseLogger | false
}

export type NoticeStatus = 'pending' | 'sent' | 'failed' | 'expired' | 'unreachable'

export interface NoticeListing {
  user: string
  email: string | null
  method: string
  step: NoticeStep
  status: NoticeStatus
  createdAt: number
  sentAt: number | null
  attempts: number
  lastError: string | null
}

export interface NoticePreview {
  user: string
  email: string | null
  /** The message a pass at that instant would send the user (null when it would send none). */
  message: NoticeMessage | null
  notices: Array<{ method: LegacyMethod; steps_due: NoticeStep[]; clients: Array<{ client: string; requests: number; last_seen: string }> }>
  /**
   * The OAuth 1.0a applications the user authorized, while OAuth 1.0a is being retired: never
   * mailed to them (their owners are told), shown on their account page in these words.
   */
  applications: Array<{ consumer_key: string; name: string; says: string }>
}

export class Notices {
  readonly store: NoticeStore
  readonly sender: NoticeSender
  readonly lookbackDays: number
  private readonly counter: Counter<'method' | 'step' | 'outcome'> | undefined
  private timer: NodeJS.Timeout | undefined
  private running: Promise<unknown> | null = null
  private readonly now: () => number

  constructor(private readonly o: NoticesOptions) {
    const { config } = o
    this.now = o.now ?? Date.now
    this.lookbackDays = config.notices.lookbackDays
    this.store = new NoticeStore(o.db)
    this.counter = o.registry
      ? new Counter({ name: 'kigo_notices_total', help: 'Migration notices by legacy method, step and outcome (sent, failed, unreachable)', labelNames: ['method', 'step', 'outcome'], registers: [o.registry] })
      : undefined
    this.sender = new NoticeSender({
      db: o.db,
      store: this.store,
      policies: () => o.policy.current(),
      outbox: o.outbox,
      hosts: hostsOf(config),
      lookbackDays: config.notices.lookbackDays,
      ...(config.notices.templateDir !== null ? { templates: loadTemplates(config.notices.templateDir) } : {}),
      now: this.now,
      onDecided: (method, step, outcome) => {
        if (outcome === 'unreachable') this.counter?.inc({ method, step, outcome })
      },
    })
    o.outbox.observe((event) => {
      if (event.kind !== noticeKind || (event.outcome !== 'sent' && event.outcome !== 'failed')) return
      for (const { method, step } of labelledSteps(event.labels)) this.counter?.inc({ method, step, outcome: event.outcome })
    })
  }

  /** Runs a pass every notices.intervalSeconds (0: never on its own). */
  start(): void {
    const seconds = this.o.config.notices.intervalSeconds
    if (seconds === 0) return
    // A database outage is logged by its watch (one line at each end), not every pass.
    this.timer = setInterval(() => {
      this.runOnce().catch((err) => this.o.logger && !isConnectionFailure(err) && this.o.logger.warn({ err: { message: (err as Error).message } }, 'notices pass failed; the next one tries again'))
    }, seconds * 1000)
    this.timer.unref()
  }

  /** One pass: decide and queue, then send; concurrent calls in this process share one. */
  async runOnce(): Promise<{ sent: number; failed: number; pending: number; decided: DecideResult }> {
    const pass = (this.running ??= (async () => {
      const decided = await this.sender.decide()
      const sent = await this.o.outbox.runOnce()
      return { ...sent, decided }
    })().finally(() => {
      this.running = null
    }))
    return pass as Promise<{ sent: number; failed: number; pending: number; decided: DecideResult }>
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.running?.catch(() => undefined)
  }

  /**
   * The impact of setting `method` to `state` from `from` (default now), the method's
   * exceptions those of `policy` (default the policy in force: a preview passes the
   * policy it would store).
   */
  async plan(method: LegacyMethod, state: PolicyState, from?: number, policy?: MethodPolicy): Promise<PolicyPlan> {
    const now = this.now()
    return policyPlan(this.store, policy ?? this.o.policy.current()[method], { method, state, from: from ?? now, now, lookbackDays: this.lookbackDays })
  }

  /** The notices recorded, with what became of their messages, newest first. */
  async list(filter: { user?: string; method?: string; status?: NoticeStatus; limit: number }): Promise<NoticeListing[]> {
    const rows = await this.store.list({ ...(filter.user !== undefined ? { user: filter.user } : {}), ...(filter.method !== undefined ? { method: filter.method } : {}), limit: filter.status === undefined ? filter.limit : 10_000 })
    // The outbox's listing is at most 1000 rows: one user's notices, or the newest 1000.
    const mails = await this.o.outbox.list({ kind: noticeKind, limit: 1000, ...(filter.user !== undefined ? { labels: { user: filter.user } } : {}) })
    const status = new Map<string, OutboxEntry>(mails.map((m) => [m.key, m]))
    const listed: NoticeListing[] = rows.map((r) => {
      const s = r.messageKey === null ? undefined : status.get(r.messageKey)
      return {
        user: r.user,
        email: r.email,
        method: r.method,
        step: r.step,
        status: r.messageKey === null ? 'unreachable' : s?.status ?? 'pending',
        createdAt: r.createdAt,
        sentAt: s?.sentAt?.getTime() ?? null,
        attempts: s?.attempts ?? 0,
        lastError: s?.lastError ?? null,
      }
    })
    return (filter.status === undefined ? listed : listed.filter((n) => n.status === filter.status)).slice(0, filter.limit)
  }

  /**
   * What `user` would be told by a pass at `at` (default now: the schedule as it stands,
   * today's usage), without recording or sending; null for an unknown user.
   */
  async preview(user: string, at?: number): Promise<NoticePreview | null> {
    const person = (await this.store.recipients([user])).get(user)
    if (person === undefined) return null
    const { notices, message } = await this.sender.preview(user, at)
    const standing = oauth1Standing(this.o.policy.current().oauth1, at ?? this.now(), user)
    const applications = standing === null ? [] : (await this.store.authorizedApplications(user)).map((a) => ({ consumer_key: a.key, name: a.name, says: standing(a.key) }))
    return { user, email: person.email, message, notices: notices.map(previewPart), applications }
  }

  /** The user's notices as they apply now (for the account page). */
  async current(user: string): Promise<RecipientNotice[]> {
    return (await this.sender.preview(user)).notices
  }

  /** Did telling people work: per method, who moved within 7 and 30 days of their first notice, who did not, and who was told too recently to tell. */
  funnel(): Promise<FunnelLine[]> {
    return noticeFunnel(this.store, this.now())
  }

  /** Per method and step: sent, failed, pending and unreachable; and the effect (dashboard). */
  async summary(): Promise<{ steps: Array<{ method: string; step: NoticeStep; sent: number; failed: number; pending: number; unreachable: number }>; effect: FunnelLine[] }> {
    const [rows, effect] = await Promise.all([this.list({ limit: 10_000 }), this.funnel()])
    const counts = new Map<string, { method: string; step: NoticeStep; sent: number; failed: number; pending: number; unreachable: number }>()
    for (const r of rows) {
      const k = `${r.method}\n${r.step}`
      if (!counts.has(k)) counts.set(k, { method: r.method, step: r.step, sent: 0, failed: 0, pending: 0, unreachable: 0 })
      // Notices carry no expiry: `expired` cannot happen; counted as pending if it ever did.
      counts.get(k)![r.status === 'expired' ? 'pending' : r.status] += 1
    }
    const steps = [...counts.values()].sort((a, b) => a.method.localeCompare(b.method) || noticeSteps.indexOf(a.step) - noticeSteps.indexOf(b.step))
    return { steps, effect }
  }
}

const previewPart = (n: RecipientNotice) => ({
  method: n.method,
  steps_due: n.steps,
  clients: n.clients.map((c) => ({ client: c.client, requests: c.requests, last_seen: isoSeconds(c.lastSeen) })),
})
