// The impact of a policy change before it is made (docs/gateway.md#migration-notices):
// from the usage report's rows of the lookback, who the change would touch. Shared by
// POST /admin/policy/plan, `kigo policy plan`, `kigo policy set` and the dashboard.
//
// Choices: `users` are the users with accepted requests of the method last seen within
// the lookback, `requests` the accepted requests those rows counted (since each row was
// first seen), `clients` their distinct client names, `sites` (login_api) the login-API
// sites among those clients. For brownout and deny, a user (or a user's client) whose
// exception is still in force when the change begins is left out: they are not touched.
import { isoSeconds } from '../../common/time.js'
import type { LegacyMethod, MethodPolicy, PolicyState } from '../policy/types.js'
import type { NoticeStore } from './store.js'

export interface PolicyPlan {
  method: LegacyMethod
  state: PolicyState
  from: string
  lookback_days: number
  users: number
  users_with_email: number
  users_without_email: number
  clients: number
  requests: number
  sites: number
}

export async function policyPlan(
  store: Pick<NoticeStore, 'planCounts'>,
  policy: MethodPolicy,
  input: { method: LegacyMethod; state: PolicyState; from: number; now: number; lookbackDays: number },
): Promise<PolicyPlan> {
  const refusing = input.state === 'brownout' || input.state === 'deny'
  const excluded = refusing ? policy.exceptions.filter((e) => e.user !== undefined && Date.parse(e.until) > input.from).map((e) => ({ user: e.user!, ...(e.client !== undefined ? { client: e.client } : {}) })) : []
  const counts = await store.planCounts(input.method, input.now - input.lookbackDays * 86_400_000, excluded)
  return {
    method: input.method,
    state: input.state,
    from: isoSeconds(input.from),
    lookback_days: input.lookbackDays,
    users: counts.users,
    users_with_email: counts.usersWithEmail,
    users_without_email: counts.users - counts.usersWithEmail,
    clients: counts.clients,
    requests: counts.requests,
    sites: counts.sites,
  }
}

/** The plan in words, for the command line and the dashboard. */
export function planText(p: PolicyPlan): string {
  const who = `${p.users} user${p.users === 1 ? '' : 's'} (${p.users_with_email} with a contact e-mail, ${p.users_without_email} without)`
  const sites = p.method === 'login_api' ? `, ${p.sites} login-API site${p.sites === 1 ? '' : 's'}` : ''
  return `${p.method} ${p.state} from ${p.from} touches ${who}, ${p.clients} client${p.clients === 1 ? '' : 's'}${sites}: ${p.requests} accepted request${p.requests === 1 ? '' : 's'} seen in the last ${p.lookback_days} days`
}
