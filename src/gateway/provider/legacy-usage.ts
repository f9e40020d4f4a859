// The account page's "tools still using WSSE or Basic" (issue: users learn which of their
// clients must move, and when): each client the usage report saw for the user, with what
// the live policy will do to it and when. Exceptions are told only to the user they name
// (or whose client they name); the page shows nothing of other users.
import { effectiveState, hasException, methodNames, nextChange, openWindow } from '../policy/evaluate.js'
import { isoSeconds } from '../policy/time.js'
import type { LegacyMethod, MethodPolicy } from '../policy/types.js'
import type { UsageRow } from '../usage/store.js'

export interface LegacyClientView {
  client: string
  method: LegacyMethod
  methodName: string
  count: number
  lastSeen: number
  /** What happens to this client now and next, in plain words (UTC instants). */
  fate: string
  /** Refused now (deny, or a brownout window open), unless an exception applies. */
  refusedNow: boolean
}

const utc = (ms: number) => `${isoSeconds(ms).slice(0, 16).replace('T', ' ')} UTC`

export function legacyClientView(row: UsageRow, policy: MethodPolicy, userId: string, now: number): LegacyClientView {
  const method = row.method as LegacyMethod
  const state = effectiveState(policy, now)
  const excepted = hasException(policy, { user: userId, client: () => row.client }, now)
  const exceptionUntil = excepted
    ? Math.min(...policy.exceptions.filter((e) => Date.parse(e.until) > now && e.user === userId && (e.client === undefined || e.client === row.client)).map((e) => Date.parse(e.until)))
    : null
  const windows = policy.windows.map((w) => `${w.start}–${w.end}`).join(', ')
  const parts: string[] = []
  let refusedNow = false
  switch (state) {
    case 'allow':
      parts.push('Works for now.')
      break
    case 'deprecate':
      parts.push('Works, but is deprecated.')
      break
    case 'brownout':
      refusedNow = openWindow(policy, now) !== null && !excepted
      parts.push(`Refused every day ${windows} UTC (brownouts), working otherwise.`)
      break
    case 'deny':
      refusedNow = !excepted
      parts.push('Refused: this method is switched off.')
      break
  }
  if (exceptionUntil !== null) parts.push(`An exception keeps it working until ${utc(exceptionUntil)}.`)
  const change = nextChange(policy, now)
  if (change !== null) {
    const what = change.state === 'deny' ? 'stops working' : change.state === 'brownout' ? `is refused every day ${windows || '(windows to be announced)'} UTC` : change.state === 'deprecate' ? 'is deprecated' : 'works again'
    parts.push(`From ${utc(change.at)} it ${what}.`)
  }
  if (policy.sunset !== null && (change === null || change.state !== 'deny')) parts.push(`Planned end: ${utc(Date.parse(policy.sunset))}.`)
  if (state === 'allow' && change === null && policy.sunset === null) parts.push('No end date is set yet; moving to OAuth now avoids a surprise.')
  return { client: row.client === '' ? '(no name sent)' : row.client, method, methodName: methodNames[method], count: row.count, lastSeen: row.lastSeen, fate: parts.join(' '), refusedNow }
}
