// Who is told what, and when (docs/gateway.md#migration-notices): pure functions of a
// method's policy, the instant, what a recipient was already told and their clients. The
// sender (sender.ts) reads the store and applies them; the tests call them directly.
//
// The rules:
// - A method is under notice while its policy is not `allow` at `now`, or a change away
//   from `allow` is scheduled.
// - `announced` is due as soon as the method is under notice.
// - The refusal date is when the method's requests first start being refused: the first
//   brownout window of a scheduled brownout, or a scheduled deny, whichever comes first
//   (once brownouts run, the scheduled deny). `reminder_7d` is due from 7 days before it,
//   `reminder_1d` from 1 day before it, and neither once it has passed.
// - `retired` is due once a deny is in effect, for a recipient refused since it began.
// - Every step is told at most once per (recipient, method); the steps due together go in
//   one message. A deny brought forward to 5 days away makes `reminder_7d` due (and not
//   `reminder_1d`): one message, not two.
// - A recipient whose clients all moved (usage/moved.ts, the usage report's rule), or who
//   made no legacy request since their last notice, is told nothing more.
// - An exception that keeps a client working past the refusal date leaves that client out
//   of the reminders and the retirement notice.
import { effectiveState, endOf, nextWindow, openWindow } from '../policy/evaluate.js'
import type { MethodPolicy } from '../policy/types.js'

export const noticeSteps = ['announced', 'reminder_7d', 'reminder_1d', 'retired'] as const
export type NoticeStep = (typeof noticeSteps)[number]

const dayMs = 86_400_000

/** The steps of one method due at an instant, for every recipient, and the dates they refer to. */
export interface DueSteps {
  steps: NoticeStep[]
  /** When requests of the method first start being refused (ms); null when nothing is scheduled. */
  refusalAt: number | null
  /** When the deny in effect began; null while none is. */
  endedAt: number | null
}

/** Whether the method is under notice: not allowed now, or a change away from allow scheduled. */
export function underNotice(policy: MethodPolicy, now: number): boolean {
  return effectiveState(policy, now) !== 'allow' || policy.schedule.some((e) => e.state !== 'allow' && Date.parse(e.from) > now)
}

/**
 * When requests of the method first start being refused after `now`: a scheduled
 * brownout's first window (at once, when it begins inside one), or a scheduled deny,
 * whichever is first; while brownouts already run, the scheduled deny. Null when neither.
 */
export function refusalAt(policy: MethodPolicy, now: number): number | null {
  const state = effectiveState(policy, now)
  if (state === 'deny') return null
  const future = policy.schedule.filter((e) => Date.parse(e.from) > now)
  const deny = future.find((e) => e.state === 'deny')
  const denyAt = deny === undefined ? null : Date.parse(deny.from)
  if (state === 'brownout') return denyAt
  const brownout = future.find((e) => e.state === 'brownout')
  let windowAt: number | null = null
  if (brownout !== undefined && policy.windows.length > 0) {
    const at = Date.parse(brownout.from)
    windowAt = openWindow(policy, at) !== null ? at : nextWindow(policy, at)?.start ?? null
  }
  if (windowAt === null) return denyAt
  return denyAt === null ? windowAt : Math.min(windowAt, denyAt)
}

/** The steps due at `now` for the method's policy (for everyone; recipientSteps narrows them). */
export function dueSteps(policy: MethodPolicy, now: number): DueSteps {
  if (!underNotice(policy, now)) return { steps: [], refusalAt: null, endedAt: null }
  const steps: NoticeStep[] = ['announced']
  const target = refusalAt(policy, now)
  if (target !== null && now >= target - 7 * dayMs) steps.push('reminder_7d')
  if (target !== null && now >= target - dayMs) steps.push('reminder_1d')
  const { endedAt } = endOf(policy, now)
  if (endedAt !== null) steps.push('retired')
  return { steps, refusalAt: target, endedAt }
}

/** One of a recipient's legacy clients as the rules see it. */
export interface RecipientClient {
  lastSeen: number
  refusedByPolicy: number
  /** The same client family was seen with OAuth or OpenID Connect after its last legacy request. */
  moved: boolean
  /** An exception keeps this client working past the refusal date. */
  excepted: boolean
}

/**
 * The steps to tell one recipient now, in step order: the due ones not told yet, none when
 * every client moved or nothing was used since the last notice (`told`: each step told,
 * with when).
 */
export function recipientSteps(due: DueSteps, told: ReadonlyMap<NoticeStep, number>, clients: readonly RecipientClient[]): NoticeStep[] {
  const pending = due.steps.filter((s) => !told.has(s))
  if (pending.length === 0) return []
  const live = clients.filter((c) => !c.moved)
  if (live.length === 0) return []
  if (told.size > 0) {
    const lastTold = Math.max(...told.values())
    if (Math.max(...live.map((c) => c.lastSeen)) <= lastTold) return []
  }
  const affected = live.filter((c) => !c.excepted)
  return pending.filter((step) => {
    if (step === 'announced') return true
    if (affected.length === 0) return false
    if (step === 'retired') return due.endedAt !== null && affected.some((c) => c.refusedByPolicy > 0 && c.lastSeen >= due.endedAt!)
    return true
  })
}

/** A stable text of what is due for a method, so that a pass can tell when it changed. */
export const dueSignature = (due: DueSteps): string => `${due.steps.join('+')}|${due.refusalAt ?? ''}|${due.endedAt ?? ''}`
