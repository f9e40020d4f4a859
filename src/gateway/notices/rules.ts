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
// - `date_moved` is due when the refusal date (or, once a deny is in effect, the date it
//   began) is earlier than the date the recipient was last told: told once per new date,
//   whatever steps were told before.
// - Every other step is told at most once per (recipient, method); the steps due together
//   go in one message. A deny brought forward to 5 days away makes `reminder_7d` due (and
//   not `reminder_1d`): one message, not two.
// - A recipient whose clients all moved (usage/moved.ts, the usage report's rule) is told
//   nothing more. Silence is not moving: a recipient with legacy use in the lookback who
//   has not moved is reminded whether or not they made a request since their last notice
//   (a weekly job may run once between two notices).
// - An exception that keeps a client working past the refusal date leaves that client out
//   of the reminders and the retirement notice.
import { effectiveState, endOf, nextWindow, openWindow } from '../policy/evaluate.js'
import type { MethodPolicy } from '../policy/types.js'

export const noticeSteps = ['announced', 'reminder_7d', 'reminder_1d', 'date_moved', 'retired'] as const
export type NoticeStep = (typeof noticeSteps)[number]

const dayMs = 86_400_000

/** The steps of one method due at an instant, for every recipient, and the dates they refer to. */
export interface DueSteps {
  steps: NoticeStep[]
  /** When requests of the method first start being refused (ms); null when nothing is scheduled. */
  refusalAt: number | null
  /** What begins at `refusalAt`: the first brownout window, or the deny. */
  refusal: 'brownout' | 'deny' | null
  /** When the deny in effect began; null while none is. */
  endedAt: number | null
}

/** Whether the method is under notice: not allowed now, or a change away from allow scheduled. */
export function underNotice(policy: MethodPolicy, now: number): boolean {
  return effectiveState(policy, now) !== 'allow' || policy.schedule.some((e) => e.state !== 'allow' && Date.parse(e.from) > now)
}

/**
 * When requests of the method first start being refused after `now`, and by what: a
 * scheduled brownout's first window (at once, when it begins inside one), or a scheduled
 * deny, whichever is first; while brownouts already run, the scheduled deny. Null when
 * neither.
 */
export function refusalOf(policy: MethodPolicy, now: number): { at: number; by: 'brownout' | 'deny' } | null {
  const state = effectiveState(policy, now)
  if (state === 'deny') return null
  const future = policy.schedule.filter((e) => Date.parse(e.from) > now)
  const deny = future.find((e) => e.state === 'deny')
  const byDeny = deny === undefined ? null : { at: Date.parse(deny.from), by: 'deny' as const }
  if (state === 'brownout') return byDeny
  const brownout = future.find((e) => e.state === 'brownout')
  let windowAt: number | null = null
  if (brownout !== undefined && policy.windows.length > 0) {
    const at = Date.parse(brownout.from)
    windowAt = openWindow(policy, at) !== null ? at : nextWindow(policy, at)?.start ?? null
  }
  if (windowAt === null) return byDeny
  return byDeny !== null && byDeny.at <= windowAt ? byDeny : { at: windowAt, by: 'brownout' }
}

/** When requests of the method first start being refused after `now` (refusalOf's date). */
export const refusalAt = (policy: MethodPolicy, now: number): number | null => refusalOf(policy, now)?.at ?? null

/** The steps due at `now` for the method's policy (for everyone; recipientSteps narrows them). */
export function dueSteps(policy: MethodPolicy, now: number): DueSteps {
  if (!underNotice(policy, now)) return { steps: [], refusalAt: null, refusal: null, endedAt: null }
  const steps: NoticeStep[] = ['announced']
  const target = refusalOf(policy, now)
  if (target !== null && now >= target.at - 7 * dayMs) steps.push('reminder_7d')
  if (target !== null && now >= target.at - dayMs) steps.push('reminder_1d')
  const { endedAt } = endOf(policy, now)
  if (endedAt !== null) steps.push('retired')
  return { steps, refusalAt: target?.at ?? null, refusal: target?.by ?? null, endedAt }
}

/** The date a notice tells as the one requests are refused from: the refusal date, or when the deny in effect began. */
export const toldDate = (due: DueSteps): number | null => due.refusalAt ?? due.endedAt

/** One of a recipient's legacy clients as the rules see it. */
export interface RecipientClient {
  lastSeen: number
  refusedByPolicy: number
  /** The same client family was seen with OAuth or OpenID Connect after its last legacy request. */
  moved: boolean
  /** An exception keeps this client working past the refusal date. */
  excepted: boolean
}

/** What a recipient was told of a method: each step with when, and the date their latest dated notice told. */
export interface Told {
  steps: ReadonlyMap<NoticeStep, number>
  /** The refusal date of the latest notice that told one; null when none did. */
  refusalAt: number | null
}

export const toldNothing: Told = { steps: new Map(), refusalAt: null }

/**
 * The steps to tell one recipient now, in step order: the due ones not told yet, and
 * `date_moved` when the date is now earlier than the one they were told; none when every
 * client moved.
 */
export function recipientSteps(due: DueSteps, told: Told, clients: readonly RecipientClient[]): NoticeStep[] {
  if (due.steps.length === 0) return []
  const live = clients.filter((c) => !c.moved)
  if (live.length === 0) return []
  const affected = live.filter((c) => !c.excepted)
  const steps = due.steps.filter((step) => {
    if (told.steps.has(step)) return false
    if (step === 'announced') return true
    if (affected.length === 0) return false
    if (step === 'retired') return due.endedAt !== null && affected.some((c) => c.refusedByPolicy > 0 && c.lastSeen >= due.endedAt!)
    return true
  })
  const date = toldDate(due)
  if (affected.length > 0 && date !== null && told.refusalAt !== null && date < told.refusalAt) steps.push('date_moved')
  return steps.sort((a, b) => noticeSteps.indexOf(a) - noticeSteps.indexOf(b))
}

/**
 * A stable text of what is due for a method, so that a pass can tell when it changed (and
 * then reads the whole lookback again). It names what begins at the refusal date, as the
 * wording does; a store swept by a release whose signature lacked it is read again whole
 * on the first pass, so that recipients it left silent are reminded.
 */
export const dueSignature = (due: DueSteps): string => `${due.steps.join('+')}|${due.refusalAt ?? ''}|${due.refusal ?? ''}|${due.endedAt ?? ''}`
