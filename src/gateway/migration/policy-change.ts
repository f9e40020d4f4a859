// A change of one method's policy, before it is made (docs/operations.md#changing-the-policy-on-the-dashboard):
// what it makes of the stored policy (as PUT /admin/policy would store it: PolicyService.
// preview), the fields that change, whom each state it begins would touch (the plan of
// POST /admin/policy/plan and `kigo policy plan`, with the exceptions the changed policy
// would have), which scheduled entries it replaces and which notice steps become due.
// The dashboard's preview shows it; its Apply sends the same change with `base`, compared
// with the stored policy in the write's own transaction, so a policy changed meanwhile is
// not applied blindly.
import { fieldChanges, type FieldChange } from '../../common/audit-diff.js'
import { Compile } from '../../common/typebox.js'
import type { DueSteps, MigrationNotices, PolicyPlan } from '../host/notices.js'
import { changedPolicy, type MethodChange } from '../policy/change.js'
import { InvalidPolicy } from '../policy/normalize.js'
import type { PolicyService, ReplacedEntry } from '../policy/service.js'
import { policyDigest } from '../policy/store.js'
import { PolicyUpdateSchema, type LegacyMethod, type MethodPolicy, type PolicyState, type PolicyUpdate } from '../policy/types.js'
import { describeSchemaError } from '../registrations/route-schemas.js'
import { methodPolicyView } from './policy-api.js'

const checkUpdate = Compile(PolicyUpdateSchema)

export interface PolicyChangePreview {
  method: LegacyMethod
  /** The body PUT /admin/policy takes for this change. */
  update: PolicyUpdate
  before: ReturnType<typeof methodPolicyView>
  after: ReturnType<typeof methodPolicyView>
  /** The stored fields that change (as the audit trail will show them). */
  changes: FieldChange[]
  /** Each state the change begins (allow aside) and whom it would touch; null without migration notices. */
  plans: Array<{ state: PolicyState; from: number | null; plan: PolicyPlan; text: string }> | null
  /** The notice steps due now (notices/rules.ts), before and after; null without migration notices. */
  due: { before: DueSteps; after: DueSteps } | null
  /** The scheduled entries the change replaces (they would undo it). */
  replaced: ReplacedEntry[]
  /** Names the stored policy the preview started from (`policyDigest`). */
  base: string
}

/**
 * The update `change` makes of `method`'s policy `current`, checked against the operator
 * API's schema. Throws InvalidPolicy for one the gateway would refuse.
 */
export function methodUpdate(method: LegacyMethod, current: MethodPolicy, change: MethodChange): PolicyUpdate {
  const update: PolicyUpdate = {}
  update[method] = changedPolicy(current, change)
  if (!checkUpdate.Check(update)) throw new InvalidPolicy(describeSchemaError(checkUpdate.Errors(update), 'body', PolicyUpdateSchema))
  return update
}

/**
 * What `change` would make of `method`'s policy and whom it would touch; stores nothing.
 * Throws InvalidPolicy for a change the gateway would refuse (as PUT would answer 400).
 */
export async function previewPolicyChange(
  deps: { policy: PolicyService; notices?: Pick<MigrationNotices, 'plan' | 'planText' | 'dueSteps'> | undefined; now: () => number },
  method: LegacyMethod,
  change: MethodChange,
): Promise<PolicyChangePreview> {
  await deps.policy.refresh()
  const update = methodUpdate(method, deps.policy.current()[method], change)
  const { before: policies, changed, replaced } = await deps.policy.preview(update)
  const before = policies[method]
  const after = changed[method]!
  // The states the change begins: a new state now, and each scheduled entry it adds.
  const begins = [
    ...(after.state !== before.state ? [{ state: after.state, from: null }] : []),
    ...after.schedule.filter((e) => !before.schedule.some((b) => b.state === e.state && b.from === e.from)).map((e) => ({ state: e.state, from: Date.parse(e.from) })),
  ].filter((b) => b.state !== 'allow')
  const notices = deps.notices
  const plans = notices === undefined ? null : await Promise.all(begins.map(async (b) => {
    const plan = await notices.plan(method, b.state, b.from ?? undefined, after)
    return { ...b, plan, text: notices.planText(plan) }
  }))
  const t = deps.now()
  return {
    method,
    update,
    before: methodPolicyView(before, t),
    after: methodPolicyView(after, t),
    changes: fieldChanges(before, after),
    plans,
    due: notices === undefined ? null : { before: notices.dueSteps(before, t), after: notices.dueSteps(after, t) },
    replaced,
    base: policyDigest(before),
  }
}
