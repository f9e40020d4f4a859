// What a legacy method's policy means at an instant, for everyone or for one client: the
// one source of every word and date kigo shows about it (the response headers, the
// migration page, the account page's legacy panel, `kigo policy show`, the dashboard),
// so that no two surfaces can tell a client different things.
//
// The rules, in the terms people read:
// - The end ("sunset") is when the method stops working for good. A scheduled `deny` is
//   the end, whether or not a sunset date was also announced; without one, the announced
//   sunset is the end. Once the method is denied it has already ended: no future date.
// - An exception keeps one user's client working until its own date: for that client
//   the end is the exception's date (or the method's, when that comes later), and the
//   first words are "Works until …", never "Refused".
// - A brownout refuses during its windows only; between them the method works.
import { deprecatedSince, effectiveState, endOf, exceptionEnd, nextChange, openWindow, type PolicySubject } from './evaluate.js'
import { utcClock, utcMinute } from '../../common/time.js'
import type { MethodPolicy, PolicyState } from './types.js'

export interface PolicyOutlook {
  /** The state in effect now. */
  state: PolicyState
  /** Requests are refused now (deny, or an open brownout window), and no exception applies. */
  refusedNow: boolean
  /** The open brownout window. */
  window: { start: number; end: number } | null
  /** Since when the method has been out of plain `allow` (RFC 9745 `Deprecation`). */
  deprecatedSince: number | null
  /** When the method stopped working for everyone (the deny in effect took effect). */
  endedAt: number | null
  /** When the method stops working for everyone (a scheduled deny, else the announced sunset); null once it has ended, or when no date is set. */
  endsAt: number | null
  /** For the subject: the end of the exception that keeps its client working, while it matters. */
  exceptionUntil: number | null
  /** When the (subject's) client stops working for good: `endsAt`, or a later exception's end; null when unknown or already. */
  worksUntil: number | null
  /** The next scheduled change. */
  next: { state: PolicyState; at: number } | null
  /** The whole outlook as sentences (UTC), the same on every surface. */
  summary: string
}

function nextText(next: { state: PolicyState; at: number }, windows: string): string {
  const when = utcMinute(next.at)
  switch (next.state) {
    case 'deny':
      return `It stops working on ${when}.`
    case 'brownout':
      return `From ${when} it is refused every day ${windows || '(windows to be announced)'} UTC.`
    case 'deprecate':
      return `From ${when} it is deprecated.`
    case 'allow':
      return `From ${when} it works as before.`
  }
}

/**
 * The outlook of `policy` at `now`; with a subject (a verified user and their client),
 * that client's own outlook, exceptions included.
 */
export function policyOutlook(policy: MethodPolicy, now: number, subject?: PolicySubject): PolicyOutlook {
  const state = effectiveState(policy, now)
  const window = state === 'brownout' ? openWindow(policy, now) : null
  const { endedAt, endsAt } = endOf(policy, now)
  // An exception matters while the method refuses (deny, brownout), or when it outlasts the end.
  const own = subject === undefined ? null : exceptionEnd(policy, subject, now)
  const exceptionUntil = own !== null && (state === 'deny' || state === 'brownout' || (endsAt !== null && own > endsAt)) ? own : null
  const refusedNow = (state === 'deny' || window !== null) && exceptionUntil === null
  const worksUntil = state === 'deny' ? exceptionUntil : endsAt === null ? null : Math.max(endsAt, exceptionUntil ?? endsAt)
  const next = nextChange(policy, now)
  const windows = policy.windows.map((w) => `${w.start}–${w.end}`).join(', ')

  const parts: string[] = []
  if (state === 'deny') {
    parts.push(exceptionUntil !== null ? `Works until ${utcMinute(exceptionUntil)} (an exception for this client); refused after that.` : `Refused: switched off since ${utcMinute(endedAt!)}.`)
  } else {
    if (state === 'allow') parts.push('Works.')
    else if (state === 'deprecate') parts.push('Works, but is deprecated.')
    else if (exceptionUntil !== null) parts.push(`Works, even during the brownouts (every day ${windows} UTC), until ${utcMinute(exceptionUntil)} (an exception for this client).`)
    else if (window !== null) parts.push(`Refused now, until ${utcClock(window.end)} UTC (a brownout); refused every day ${windows} UTC, working otherwise.`)
    else parts.push(`Works, except every day ${windows} UTC (brownouts).`)
    if (next !== null && next.state !== 'deny') parts.push(nextText(next, windows))
    if (endsAt === null) parts.push('No end date is set yet.')
    else if (exceptionUntil !== null && exceptionUntil > endsAt) parts.push(`It stops working on ${utcMinute(endsAt)}, but an exception keeps this client working until ${utcMinute(exceptionUntil)}.`)
    else if (endsAt <= now) parts.push(`It was announced to stop working on ${utcMinute(endsAt)}, and may stop at any time.`)
    else parts.push(`It stops working on ${utcMinute(endsAt)}.`)
  }
  return { state, refusedNow, window, deprecatedSince: deprecatedSince(policy, now), endedAt, endsAt, exceptionUntil, worksUntil, next, summary: parts.join(' ') }
}
