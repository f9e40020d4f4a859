// Whether a client seen with Basic or WSSE has moved to OAuth, by client family
// (client-name.ts): HaikuDroid/3.2 on Basic, then HaikuDroid/4.0 on OAuth for the same
// user, is a client that moved, with 4.0 the version that did. Shared by the usage report
// (the dashboard, the CSV, GET /admin/usage, `kigo usage`) and the account page.
import { clientFamily } from './client-name.js'
import type { UsageRow } from './store.js'

export interface OAuthUse {
  /** The OAuth client of the family last seen (its name as sent, with its version). */
  client: string
  lastSeen: number
}

const key = (user: string, client: string) => `${user}\u0000${clientFamily(client)}`

/** From OAuth (and OpenID Connect) rows, a lookup: the same user's newest OAuth use of a legacy row's client family. */
export function oauthUseByFamily(oauthRows: Array<Pick<UsageRow, 'method' | 'user' | 'client' | 'lastSeen'>>): (row: Pick<UsageRow, 'user' | 'client'>) => OAuthUse | null {
  const seen = new Map<string, OAuthUse>()
  for (const r of oauthRows) {
    if (r.method !== 'oauth' && r.method !== 'oidc') continue
    const k = key(r.user, r.client)
    const cur = seen.get(k)
    if (!cur || r.lastSeen > cur.lastSeen) seen.set(k, { client: r.client, lastSeen: r.lastSeen })
  }
  return (row) => seen.get(key(row.user, row.client)) ?? null
}

/** Moved: the family's newest requests are OAuth ones (seen after this row's last legacy request). */
export const hasMoved = (row: Pick<UsageRow, 'lastSeen'>, oauth: OAuthUse | null): boolean => oauth !== null && oauth.lastSeen > row.lastSeen
