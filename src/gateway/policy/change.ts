// A change of one method's policy as an operator asks for it (docs/gateway.md#the-migration-policy):
// `kigo policy set`'s options and the dashboard's form both say it as a MethodChange, and
// `changedPolicy` turns it into the whole method policy PUT /admin/policy takes, so the
// two agree on what a change keeps (exceptions, other scheduled entries, since). What is
// sent is checked by the gateway (normalize.ts); here only what the operator wrote.
import { InvalidPolicy } from './normalize.js'
import type { BrownoutWindowSpec, MethodPolicy, MethodPolicyInput, PolicyExceptionSpec, PolicyState, ScheduleEntrySpec } from './types.js'

export interface MethodChange {
  /** The state from now on; absent, the state stays. */
  state?: PolicyState
  /** Scheduled entries removed first: all of them, or those of one state. */
  unschedule?: 'all' | PolicyState
  /**
   * A change that takes effect later. The gateway replaces the entries it would undo
   * (one of the same state, one at the same instant, a less strict one after it).
   */
  schedule?: ScheduleEntrySpec
  /** The announced sunset; null for none; absent, it stays. */
  sunset?: string | null
  windows?: BrownoutWindowSpec[]
  clearExceptions?: boolean
  /** An exception added (it replaces one for the same user, client and application). */
  exception?: PolicyExceptionSpec
  /** oauth1: close (true) or reopen (false) the registration of new applications; absent, it stays. */
  closeRegistration?: boolean
}

type Current = Pick<MethodPolicy, 'state' | 'sunset' | 'windows' | 'schedule' | 'exceptions' | 'registration_closed'>

/** The method's policy with `change` made, in the shape PUT /admin/policy takes. */
export function changedPolicy(current: Current, change: MethodChange): MethodPolicyInput {
  const entries = change.unschedule === undefined ? current.schedule : change.unschedule === 'all' ? [] : current.schedule.filter((s) => s.state !== change.unschedule)
  const added = change.schedule
  // The entries it replaces are left to the gateway, which says which they were.
  const schedule = added === undefined ? entries : [...entries, added]
  const others = change.clearExceptions === true ? [] : current.exceptions
  const x = change.exception
  const exceptions = x === undefined ? others : [...others.filter((e) => e.user !== x.user || e.client !== x.client || e.application !== x.application), x]
  const closed = change.closeRegistration ?? current.registration_closed === true
  return {
    state: change.state ?? current.state,
    sunset: change.sunset === undefined ? current.sunset : change.sunset,
    windows: change.windows ?? current.windows,
    schedule,
    exceptions,
    ...(closed ? { registration_closed: true } : {}),
  }
}

/** `09:00-12:00,21:00-24:00` as brownout windows (UTC); `none` or nothing for none. */
export function parseWindows(value: string): BrownoutWindowSpec[] {
  if (value.trim() === '' || value.trim() === 'none') return []
  return value.split(',').map((part) => {
    const m = /^\s*([0-9]{2}:[0-9]{2})\s*-\s*([0-9]{2}:[0-9]{2})\s*$/.exec(part)
    if (!m) throw new InvalidPolicy(`brownout windows are UTC times like 09:00-12:00,21:00-24:00, not ${JSON.stringify(part.trim())}`)
    return { start: m[1]!, end: m[2]! }
  })
}

export const windowsText = (windows: readonly BrownoutWindowSpec[]): string => windows.map((w) => `${w.start}-${w.end}`).join(', ')

/**
 * In words, when the date clients are sent as `Sunset` (the policy view's `ends_at`) moves
 * with a change, and why: a scheduled deny is the end, whatever sunset was announced; ''
 * when it does not move.
 * `agree` says how the reader makes the announced sunset agree (a CLI option, a field).
 */
export function sunsetMoved(
  before: { effective: { ends_at: string | null } },
  after: { sunset: string | null; effective: { ends_at: string | null } },
  agree: (date: string) => string,
): string {
  const was = before.effective.ends_at
  const now = after.effective.ends_at
  if (was === now || now === null || was === null) return ''
  const why = after.sunset !== null && after.sunset !== now
    ? `the scheduled deny is the end clients are told of; the announced sunset ${after.sunset} is kept but no longer sent (${agree(now)} to make them agree)`
    : 'the sunset or the schedule changed'
  return `clients' Sunset moves from ${was} to ${now}: ${why}`
}
