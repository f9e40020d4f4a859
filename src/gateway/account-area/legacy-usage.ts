// The account page's "tools still using WSSE or Basic" (users learn which of their
// clients must move, and when): each client the usage report saw for the user, with what
// the live policy will do to it and when, in the words every other surface uses
// (policy/outlook.ts). Exceptions are told only to the user they name; the page shows
// nothing of other users. A client whose family has since been seen with OAuth (a newer
// version that moved, usage/moved.ts) is told as moved, not as one to update.
import { utcMinute } from '../../common/time.js'
import { methodNames } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
import { isLegacyMethod, type LegacyMethod, type MethodPolicy, type Policies } from '../policy/types.js'
import type { UsageRow } from '../usage/store.js'
import { hasMoved, oauthUseByFamily, type OAuthUse } from '../usage/moved.js'

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
  /** The version of this client that has since moved to OAuth; null when none did. */
  movedAs: string | null
}


export function legacyClientView(row: UsageRow, policy: MethodPolicy, userId: string, now: number, oauth: OAuthUse | null = null): LegacyClientView {
  const method = row.method as LegacyMethod
  const client = row.client === '' ? '(no name sent)' : row.client
  if (hasMoved(row, oauth)) {
    // The same version seen with OAuth since is the same tool, updated in place: there is no older one to look for.
    const fate = oauth!.client === row.client
      ? `Moved: this client now signs in with OAuth (last ${utcMinute(oauth!.lastSeen)}). Nothing to do.`
      : `Moved: ${oauth!.client === '' ? 'a newer version' : oauth!.client} signs in with OAuth (last ${utcMinute(oauth!.lastSeen)}). Nothing to do, unless this older version still runs somewhere.`
    return { client, method, methodName: methodNames[method], count: row.count, lastSeen: row.lastSeen, fate, refusedNow: false, movedAs: oauth!.client }
  }
  const outlook = policyOutlook(policy, now, { user: userId, client: () => row.client })
  const fate = outlook.state === 'allow' && outlook.endsAt === null && outlook.next === null
    ? `${outlook.summary} Moving to OAuth now avoids a surprise.`
    : outlook.summary
  return { client, method, methodName: methodNames[method], count: row.count, lastSeen: row.lastSeen, fate, refusedNow: outlook.refusedNow, movedAs: null }
}

/** Each legacy client among a user's usage rows, as the account pages tell it (`usage`: all the user's rows, OAuth ones too). */
export function legacyClients(usage: UsageRow[], policies: Policies, userId: string, now: number): LegacyClientView[] {
  const oauthUse = oauthUseByFamily(usage)
  return usage.filter((r) => isLegacyMethod(r.method)).map((r) => legacyClientView(r, policies[r.method as LegacyMethod], userId, now, oauthUse(r)))
}

/**
 * Where the login API stands, for the pages that list a user's login sites, from the
 * policy in force: retired (denied), being retired (deprecated, brownouts, or an end or
 * a change ahead), or simply working.
 */
export function loginApiStanding(policy: MethodPolicy, now: number): { retiring: boolean; text: string } {
  const outlook = policyOutlook(policy, now)
  if (outlook.state === 'deny') return { retiring: true, text: `The login API has been switched off. ${outlook.summary}` }
  if (outlook.state !== 'allow' || outlook.endsAt !== null || outlook.next !== null) return { retiring: true, text: `The login API is being retired. ${outlook.summary}` }
  return { retiring: false, text: 'The login API works, and no date is set for it to stop.' }
}
