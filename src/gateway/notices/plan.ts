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
import { movedRule, oauth1Rule, recipientMoved } from '../usage/moved.js'
import type { LegacyMethod, MethodPolicy, PolicyState } from '../policy/types.js'
import type { PolicyPlan } from '../host/notices.js'
import type { NoticeStore, PlanRow } from './store.js'

/** Who a policy change would concern: the shape the other features read too (host/notices.ts). */
export type { PolicyPlan } from '../host/notices.js'

export async function policyPlan(
  store: Pick<NoticeStore, 'planRows' | 'modernRows' | 'oauth1Facts'>,
  policy: MethodPolicy,
  input: { method: LegacyMethod; state: PolicyState; from: number; now: number; lookbackDays: number },
): Promise<PolicyPlan> {
  const refusing = input.state === 'brownout' || input.state === 'deny'
  if (input.method === 'oauth1') return oauth1Plan(store, policy, input, refusing)
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

/**
 * oauth1: the owners of the applications (consumer keys) whose OAuth 1.0a tokens were used
 * in the lookback, without the applications that moved (usage/moved.ts oauth1Rule) and
 * the users' tokens that did; an exception for a user, an application, or a user of one,
 * in force when the change begins, leaves those requests out.
 */
async function oauth1Plan(
  store: Pick<NoticeStore, 'planRows' | 'oauth1Facts'>,
  policy: MethodPolicy,
  input: { method: LegacyMethod; state: PolicyState; from: number; now: number; lookbackDays: number },
  refusing: boolean,
): Promise<PolicyPlan> {
  const excluded = refusing
    ? policy.exceptions.filter((e) => (e.user !== undefined || e.application !== undefined) && Date.parse(e.until) > input.from).map((e) => ({ ...(e.user !== undefined ? { user: e.user } : {}), ...(e.client !== undefined ? { client: e.client } : {}), ...(e.application !== undefined ? { application: e.application } : {}) }))
    : []
  const rows = (await store.planRows('oauth1', input.now - input.lookbackDays * 86_400_000, excluded)).filter((r) => r.owner !== null)
  const rule = oauth1Rule(await store.oauth1Facts([...new Set(rows.map((r) => r.clientId))]))
  // One use per (application, user): their rows (one per client name) summed.
  const uses = new Map<string, { application: string; user: string; lastSeen: number; accepted: number; owner: string; hasEmail: boolean }>()
  for (const r of rows) {
    const k = `${r.clientId}\n${r.user}`
    const u = uses.get(k)
    if (u) {
      u.lastSeen = Math.max(u.lastSeen, r.lastSeen)
      u.accepted += r.accepted
    } else uses.set(k, { application: r.clientId, user: r.user, lastSeen: r.lastSeen, accepted: r.accepted, owner: r.owner!, hasEmail: r.hasEmail })
  }
  const byApp = new Map<string, Array<typeof uses extends Map<string, infer U> ? U : never>>()
  for (const u of uses.values()) {
    if (!byApp.has(u.application)) byApp.set(u.application, [])
    byApp.get(u.application)!.push(u)
  }
  const owners = new Map<string, { hasEmail: boolean; live: boolean }>()
  let requests = 0
  let applicationUsers = 0
  const liveApps = new Set<string>()
  for (const [application, own] of byApp) {
    const moved = rule.application(application, own)
    const owner = own[0]!
    const o = owners.get(owner.owner) ?? { hasEmail: owner.hasEmail, live: false }
    owners.set(owner.owner, o)
    if (moved) continue
    o.live = true
    liveApps.add(application)
    const live = own.filter((u) => rule.token(u) === 'on_oauth1')
    applicationUsers += live.length
    requests += live.reduce((sum, u) => sum + u.accepted, 0)
  }
  const told = [...owners.values()].filter((o) => o.live)
  return {
    method: input.method,
    state: input.state,
    from: isoSeconds(input.from),
    lookback_days: input.lookbackDays,
    users: told.length,
    users_with_email: told.filter((o) => o.hasEmail).length,
    users_without_email: told.filter((o) => !o.hasEmail).length,
    clients: liveApps.size,
    requests,
    sites: 0,
    moved_users: [...owners.values()].filter((o) => !o.live).length,
    applications: liveApps.size,
    application_users: applicationUsers,
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** What the change does to those who have not moved, and what the notices' pass then sends. */
function effectText(p: PolicyPlan): string {
  const who = p.method === 'login_api' ? `the owners of ${p.sites === 1 ? 'that site' : 'those sites'}` : p.method === 'oauth1' ? `the owners of ${p.clients === 1 ? 'that application' : 'those applications'}` : p.users === 1 ? 'that user' : 'those users'
  if (p.method === 'oauth1' && p.state !== 'allow') {
    const told = `Notices go to ${who}: ${p.users_with_email} by mail, ${p.users_without_email} on the account page only (no contact e-mail); the applications' users are not mailed (their account pages say so).`
    if (p.state === 'deprecate') return `Requests keep working, with deprecation headers. ${told}`
    return `The applications' requests are refused${p.state === 'brownout' ? ' during the brownout windows' : ''}. ${told}`
  }
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
  if (p.method === 'oauth1') {
    const owners = `${plural(p.users, 'owner')} (${p.users_with_email} with a contact e-mail, ${p.users_without_email} without)`
    return `oauth1 (OAuth 1.0a) ${p.state} from ${p.from}: ${plural(p.applications ?? p.clients, 'application')} not moved yet, of ${owners}, using the tokens of ${plural(p.application_users ?? 0, 'user')}, ${plural(p.requests, 'accepted request')} in the last ${p.lookback_days} days (${plural(p.moved_users, 'owner')} whose applications all moved, not counted). ${effectText(p)}`
  }
  const who = `${plural(p.users, 'user')} (${p.users_with_email} with a contact e-mail, ${p.users_without_email} without)`
  const sites = p.method === 'login_api' ? `, ${plural(p.sites, 'login-API site')}` : ''
  return `${p.method} ${p.state} from ${p.from}: ${who} not moved yet, ${plural(p.clients, 'client')}${sites}, ${plural(p.requests, 'accepted request')} in the last ${p.lookback_days} days (${plural(p.moved_users, 'user')} moved, not counted). ${effectText(p)}`
}
