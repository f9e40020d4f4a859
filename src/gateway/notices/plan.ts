// The impact of a policy change before it is made (docs/gateway.md#migration-notices):
// from the usage report's rows of the lookback, who the change would touch. Shared by
// POST /admin/policy/plan, `kigo policy plan`, `kigo policy set` and the dashboard.
//
// Choices: the plan counts who has not moved (usage/moved.ts, the usage report's rule),
// and says how many did: `users` are the users with accepted requests of the method last
// seen within the lookback whose clients have not all moved, `requests` the accepted
// requests of their clients that have not moved (since each row was first seen), `clients`
// those clients' distinct names, `sites` (login_api) the login-API sites among them, and
// `moved_users` the users of the lookback whose clients all moved. For brownout and deny, a
// user (or a user's client) whose exception is still in force when the change begins is
// left out: they are not touched. The notices' pass tells the same people: those who have
// not moved, by mail with a contact e-mail, on the account page without one (for
// login_api, the owners of the sites).
import { isoSeconds } from '../../common/time.js'
import { movedRule, recipientMoved } from '../usage/moved.js'
import type { LegacyMethod, MethodPolicy, PolicyState } from '../policy/types.js'
import type { PolicyPlan } from '../host/notices.js'
import type { NoticeStore, PlanRow } from './store.js'

/** Who a policy change would concern: the shape the other features read too (host/notices.ts). */
export type { PolicyPlan } from '../host/notices.js'

export async function policyPlan(
  store: Pick<NoticeStore, 'planRows' | 'modernRows'>,
  policy: MethodPolicy,
  input: { method: LegacyMethod; state: PolicyState; from: number; now: number; lookbackDays: number },
): Promise<PolicyPlan> {
  const refusing = input.state === 'brownout' || input.state === 'deny'
  const excluded = refusing ? policy.exceptions.filter((e) => e.user !== undefined && Date.parse(e.until) > input.from).map((e) => ({ user: e.user!, ...(e.client !== undefined ? { client: e.client } : {}) })) : []
  const rows = await store.planRows(input.method, input.now - input.lookbackDays * 86_400_000, excluded)
  const site = input.method === 'login_api'
  const modern = await store.modernRows(input.method, [...new Set(rows.flatMap((r) => (site ? (r.owner === null ? [] : [r.owner]) : [r.user])))])
  const rule = movedRule(modern)
  const moved = (r: PlanRow) => rule({ method: input.method, user: r.user, client: r.client, lastSeen: r.lastSeen, owner: r.owner })
  const byUser = new Map<string, PlanRow[]>()
  for (const r of rows) {
    const own = byUser.get(r.user)
    if (own) own.push(r)
    else byUser.set(r.user, [r])
  }
  const movedUsers = [...byUser.values()].filter((own) => recipientMoved(own, moved)).length
  const live = rows.filter((r) => !moved(r))
  const users = new Map(live.map((r) => [r.user, r.hasEmail]))
  return {
    method: input.method,
    state: input.state,
    from: isoSeconds(input.from),
    lookback_days: input.lookbackDays,
    users: users.size,
    users_with_email: [...users.values()].filter(Boolean).length,
    users_without_email: [...users.values()].filter((e) => !e).length,
    // A site is one client by its identity (two sites may share a name).
    clients: new Set(live.map((r) => `${r.client}\n${r.clientId}`)).size,
    requests: live.reduce((sum, r) => sum + r.accepted, 0),
    sites: site ? new Set(live.filter((r) => r.owner !== null).map((r) => r.clientId)).size : 0,
    moved_users: movedUsers,
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** What the change does to those who have not moved, and what the notices' pass then sends. */
function effectText(p: PolicyPlan): string {
  const who = p.method === 'login_api' ? `the owners of ${p.sites === 1 ? 'that site' : 'those sites'}` : p.users === 1 ? 'that user' : 'those users'
  const told = p.method === 'login_api'
    ? `Notices go to ${who}.`
    : `Notices go to ${who}: ${p.users_with_email} by mail, ${p.users_without_email} on the account page only (no contact e-mail).`
  switch (p.state) {
    case 'allow':
      return 'This refuses no one and announces nothing: the method is accepted with no deprecation headers, and no notice is sent for it unless a change is scheduled.'
    case 'deprecate':
      return `Requests keep working, with deprecation headers. ${told}`
    case 'brownout':
      return `Their requests are refused during the brownout windows. ${told}`
    case 'deny':
      return `Their requests are refused. ${told}`
  }
}

/** The plan in words, for the command line and the dashboard. */
export function planText(p: PolicyPlan): string {
  const who = `${plural(p.users, 'user')} (${p.users_with_email} with a contact e-mail, ${p.users_without_email} without)`
  const sites = p.method === 'login_api' ? `, ${plural(p.sites, 'login-API site')}` : ''
  return `${p.method} ${p.state} from ${p.from}: ${who} not moved yet, ${plural(p.clients, 'client')}${sites}, ${plural(p.requests, 'accepted request')} in the last ${p.lookback_days} days (${plural(p.moved_users, 'user')} moved, not counted). ${effectText(p)}`
}
