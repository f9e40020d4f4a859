// The account page's "tools still using WSSE or Basic" (users learn which of their
// clients must move, and when): each client the usage report saw for the user, with what
// the live policy will do to it and when, in the words every other surface uses
// (policy/outlook.ts). Exceptions are told only to the user they name; the page shows
// nothing of other users.
import { methodNames } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
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

export function legacyClientView(row: UsageRow, policy: MethodPolicy, userId: string, now: number): LegacyClientView {
  const method = row.method as LegacyMethod
  const outlook = policyOutlook(policy, now, { user: userId, client: () => row.client })
  const fate = outlook.state === 'allow' && outlook.endsAt === null && outlook.next === null
    ? `${outlook.summary} Moving to OAuth now avoids a surprise.`
    : outlook.summary
  return { client: row.client === '' ? '(no name sent)' : row.client, method, methodName: methodNames[method], count: row.count, lastSeen: row.lastSeen, fate, refusedNow: outlook.refusedNow }
}
