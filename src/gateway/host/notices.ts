// What the notices feature offers the others through the host (host/feature.ts,
// `Provisions`): the migration screens show its plan, its funnel and its notices, without
// importing the notices folder. The shapes are the ones the operator API answers with.
import type { LegacyMethod, MethodPolicy, PolicyState } from '../policy/types.js'

/** Who a policy change would concern (docs/gateway.md#migration-notices). */
export interface PolicyPlan {
  method: LegacyMethod
  state: PolicyState
  from: string
  lookback_days: number
  users: number
  users_with_email: number
  users_without_email: number
  clients: number
  requests: number
  sites: number
  /** Users of the lookback whose clients all moved: not counted above, and told nothing. */
  moved_users: number
  /**
   * oauth1 only: the applications not moved and the users whose tokens of them are still on
   * OAuth 1.0a. For oauth1 `users` (and `users_with_email`…) are the applications' owners,
   * the ones told; `clients` the applications; `moved_users` the owners all of whose
   * applications moved.
   */
  applications?: number
  application_users?: number
}

export interface NotMoved {
  user: string
  toldAt: number
  /** When the policy first refused one of their requests of the method; null when never. */
  refusedSince: number | null
}

/** Did telling people work, for one method. */
export interface FunnelLine {
  method: string
  told: number
  moved7: number
  moved30: number
  /** Moved, whenever it was. */
  moved: number
  notMoved: number
  /** Of those not moved, how many the policy refused. */
  refused: number
  /** Told less than 7 days ago and not moved. */
  tooEarly: number
  /** Told less than 30 days ago and not moved within 30 days: too early for the 30-day column. */
  tooEarly30: number
  /** The recipients not moved (at most `listed` of them), the longest told first. */
  notMovedList: NotMoved[]
  /**
   * oauth1 only: per application of the owners told (recipients are owners; an owner
   * moved when all their applications did): its users' tokens exchanged, the users who
   * authorized it again with OAuth 2.0, and the users still on OAuth 1.0a.
   */
  applications?: FunnelApplication[]
}

export interface FunnelApplication {
  application: string
  name: string
  owner: string
  moved: boolean
  exchanged: number
  authorizedAgain: number
  onOauth1: number
}

export type NoticeStatus = 'pending' | 'sent' | 'failed' | 'expired' | 'unreachable'

export interface NoticeListing {
  user: string
  email: string | null
  method: string
  step: string
  status: NoticeStatus
  createdAt: number
  sentAt: number | null
  attempts: number
  lastError: string | null
}

/** The notice steps of one method due at an instant, for every recipient, and the dates they refer to. */
export interface DueSteps {
  steps: readonly string[]
  /** When requests of the method first start being refused (ms); null when nothing is scheduled. */
  refusalAt: number | null
  /** What begins at `refusalAt`: the first brownout window, or the deny. */
  refusal: 'brownout' | 'deny' | null
  /** When the deny in effect began; null while none is. */
  endedAt: number | null
}

export interface MigrationNotices {
  /** Days of usage a plan and the recipients look back over. */
  readonly lookbackDays: number
  plan(method: LegacyMethod, state: PolicyState, from?: number, policy?: MethodPolicy): Promise<PolicyPlan>
  /** The plan in one sentence, as the dashboard and the CLI show it. */
  planText(plan: PolicyPlan): string
  /** The steps due at `at` under the method's policy `policy` (for everyone). */
  dueSteps(policy: MethodPolicy, at: number): DueSteps
  runOnce(): Promise<{ sent: number; failed: number; pending: number }>
  list(filter: { user?: string; method?: string; status?: NoticeStatus; limit: number }): Promise<NoticeListing[]>
  /** What a pass at `at` would send `user` (as the operator API shows it), or null for no such user. */
  preview(user: string, at?: number): Promise<object | null>
  funnel(): Promise<FunnelLine[]>
  summary(): Promise<{ steps: Array<{ method: string; step: string; sent: number; failed: number; pending: number; unreachable: number }>; effect: FunnelLine[] }>
}
