// OAuth 1.0a's notices (docs/gateway.md#oauth-10a-as-a-legacy-method): an application's
// owner is the one told, about each of their applications still on OAuth 1.0a: how many
// users' tokens it used in the lookback (those not moved) and its requests with them, when
// last, and (message.ts) the two ways on. The users of the application are told nothing by
// mail. Whether an application or a user's token moved is usage/moved.ts's oauth1Rule.
import type { Deployment } from '../../common/deployment.js'
import type { Oauth1Rule, Oauth1TokenState } from '../usage/moved.js'
import type { RecipientRow } from './store.js'

/** One application of an owner, as its notice tells it. */
export interface Oauth1Application {
  owner: string
  /** The consumer key. */
  application: string
  name: string
  /** Users whose tokens of it are still on OAuth 1.0a (used in the lookback, not exchanged, not authorized again). */
  users: number
  /** Accepted OAuth 1.0a requests with those users' tokens. */
  requests: number
  /** Its last OAuth 1.0a request (any user's). */
  lastSeen: number
  refusedByPolicy: number
  /** When the policy first refused one of its requests; null when never. */
  firstRefused: number | null
  moved: boolean
  /** The deployment of its latest request. */
  deployment: Deployment
  /** Each user's token, and where it stands. */
  tokens: Array<{ user: string; state: Oauth1TokenState }>
}

/** The owners' applications from their rows (one per application and user), judged by `rule`. */
export function oauth1Applications(rows: readonly RecipientRow[], rule: Oauth1Rule): Oauth1Application[] {
  const byApp = new Map<string, RecipientRow[]>()
  for (const r of rows) {
    const key = r.clientId ?? ''
    if (!byApp.has(key)) byApp.set(key, [])
    byApp.get(key)!.push(r)
  }
  return [...byApp.entries()].map(([application, own]) => {
    const uses = own.map((r) => ({ application, user: r.user, lastSeen: r.lastSeen }))
    const tokens = uses.map((u) => ({ user: u.user, state: rule.token(u) }))
    const live = own.filter((_, i) => tokens[i]!.state === 'on_oauth1')
    const newest = own.reduce((a, b) => (b.lastSeen > a.lastSeen ? b : a))
    const refused = own.filter((r) => r.firstRefused !== null).map((r) => r.firstRefused!)
    return {
      owner: own[0]!.recipient,
      application,
      name: own[0]!.client,
      users: live.filter((r) => r.accepted > 0).length,
      requests: live.reduce((sum, r) => sum + r.accepted, 0),
      lastSeen: newest.lastSeen,
      refusedByPolicy: own.reduce((sum, r) => sum + r.refusedByPolicy, 0),
      firstRefused: refused.length === 0 ? null : Math.min(...refused),
      moved: rule.application(application, uses),
      deployment: newest.deployment,
      tokens,
    }
  })
}
