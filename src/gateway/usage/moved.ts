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

// ---- OAuth 1.0a (the policy method oauth1; its requests are counted as method oauth) ----
//
// An OAuth 1.0a application is moved by its developer, not by its users: the application
// moved when it was seen with OAuth 2.0 (usage rows of method oauth2 naming it by its
// consumer key) after its last OAuth 1.0a request. One user's token of it moved once it was
// exchanged for OAuth 2.0 tokens (usage/exchanges.ts), or when the user authorized the
// application again with OAuth 2.0 (an oauth2 request of theirs through it after their last
// OAuth 1.0a one). An application all of whose users' tokens of the lookback moved has
// moved too. Silence is not moving, and neither is a refusal: a request the policy refused
// is still an OAuth 1.0a request.

/** One user's OAuth 1.0a use of an application (their usage rows of method oauth for it, summed). */
export interface Oauth1Use {
  application: string
  user: string
  lastSeen: number
}

/** What is known of an application's OAuth 2.0 side: its oauth2 usage rows, and the tokens exchanged. */
export interface Oauth2Facts {
  oauth2: ReadonlyArray<{ application: string; user: string; lastSeen: number }>
  exchanges: ReadonlyArray<{ application: string; user: string; exchangedAt: number }>
}

/** Where one user's token of an application stands. */
export type Oauth1TokenState = 'exchanged' | 'authorized_again' | 'on_oauth1'

export interface Oauth1Rule {
  token(use: Oauth1Use): Oauth1TokenState
  /** Whether the application moved, from its users' OAuth 1.0a uses (of the lookback). */
  application(application: string, uses: readonly Oauth1Use[]): boolean
}

export function oauth1Rule(facts: Oauth2Facts): Oauth1Rule {
  const latest = new Map<string, number>()
  const byUser = new Map<string, number>()
  const exchanged = new Set<string>()
  const pair = (a: string, u: string) => `${a}\u0000${u}`
  for (const r of facts.oauth2) {
    latest.set(r.application, Math.max(latest.get(r.application) ?? -Infinity, r.lastSeen))
    byUser.set(pair(r.application, r.user), Math.max(byUser.get(pair(r.application, r.user)) ?? -Infinity, r.lastSeen))
  }
  for (const e of facts.exchanges) exchanged.add(pair(e.application, e.user))
  const token = (use: Oauth1Use): Oauth1TokenState => {
    if (exchanged.has(pair(use.application, use.user))) return 'exchanged'
    return (byUser.get(pair(use.application, use.user)) ?? -Infinity) > use.lastSeen ? 'authorized_again' : 'on_oauth1'
  }
  return {
    token,
    application(application, uses) {
      const last = Math.max(...uses.map((u) => u.lastSeen))
      if ((latest.get(application) ?? -Infinity) > last) return true
      return uses.length > 0 && uses.every((u) => token(u) !== 'on_oauth1')
    },
  }
}
