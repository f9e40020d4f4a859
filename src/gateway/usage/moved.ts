// Whether a legacy client has moved, the one rule every surface uses: the usage report
// (the dashboard, the CSV, GET /admin/usage, `kigo usage`), the account page, the
// notices' rules, the policy plan and the notices' funnel.
//
// A client moved when the same client family (client-name.ts) was seen with OAuth, OAuth
// 2.0 or OpenID Connect after its last legacy request: HaikuDroid/3.2 on Basic, then
// HaikuDroid/4.0 on OAuth for the same user, is a client that moved, with 4.0 the version
// that did. Silence is not moving, and neither is a refusal: a legacy request the policy
// refused is still a legacy request.
//
// A login-API site is not any one user's client: its sign-ins are its visitors'. It moves
// only through its owner's own OpenID Connect clients (registered by the same user, the
// same family as the site's name), whoever signs in to them; a client anyone else
// registers under a similar name moves nothing of it.
import { clientFamily } from './client-name.js'
import type { UsageRow } from './store.js'

/** The methods a legacy client moves to. */
export const modernMethods: readonly string[] = ['oauth', 'oauth2', 'oidc']

export interface OAuthUse {
  /** The OAuth client of the family last seen (its name as sent, with its version). */
  client: string
  lastSeen: number
}

/** A usage row as the rule reads it; `owner` is a login-API site's or OpenID Connect client's registrant. */
export type MovedRow = Pick<UsageRow, 'method' | 'user' | 'client' | 'lastSeen'> & { owner?: string | null }

/** A legacy row as the lookup matches it (no method: a Basic or WSSE one). */
export type LegacyRef = Pick<UsageRow, 'user' | 'client'> & { method?: string; owner?: string | null }

/** What a legacy row is matched by: its user's client family, or (a site) its owner's. */
function legacyKey(row: LegacyRef): string | null {
  if (row.method !== 'login_api') return `user\u0000${row.user}\u0000${clientFamily(row.client)}`
  return row.owner == null ? null : `owner\u0000${row.owner}\u0000${clientFamily(row.client)}`
}

/**
 * From modern rows (other rows are passed over), a lookup: the newest modern use of a
 * legacy row's client family, by the same user (or, for a login-API site, through its
 * owner's own OpenID Connect clients).
 */
export function oauthUseByFamily(modernRows: readonly MovedRow[]): (row: LegacyRef) => OAuthUse | null {
  const seen = new Map<string, OAuthUse>()
  const note = (k: string, r: MovedRow) => {
    const cur = seen.get(k)
    if (!cur || r.lastSeen > cur.lastSeen) seen.set(k, { client: r.client, lastSeen: r.lastSeen })
  }
  for (const r of modernRows) {
    if (!modernMethods.includes(r.method)) continue
    note(`user\u0000${r.user}\u0000${clientFamily(r.client)}`, r)
    if (r.method === 'oidc' && r.owner != null) note(`owner\u0000${r.owner}\u0000${clientFamily(r.client)}`, r)
  }
  return (row) => {
    const k = legacyKey(row)
    return k === null ? null : seen.get(k) ?? null
  }
}

/** Moved: the family's newest requests are modern ones (seen after this row's last legacy request). */
export const hasMoved = (row: Pick<UsageRow, 'lastSeen'>, oauth: OAuthUse | null): boolean => oauth !== null && oauth.lastSeen > row.lastSeen

/** A lookup of whether one legacy row moved, from the modern rows of the same users (and sites' owners). */
export function movedRule(modernRows: readonly MovedRow[]): (row: MovedRow) => boolean {
  const use = oauthUseByFamily(modernRows)
  return (row) => hasMoved(row, use(row))
}

/** Whether a recipient (a user, or a site's owner) moved for a method: every one of their legacy rows did; none with no rows. */
export function recipientMoved<R>(rows: readonly R[], moved: (row: R) => boolean): boolean {
  return rows.length > 0 && rows.every(moved)
}
