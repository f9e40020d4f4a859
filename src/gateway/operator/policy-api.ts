// GET/PUT /admin/policy (docs/gateway.md#the-migration-policy, docs/gateway.md#the-operator-api-and-dashboard): the migration policy of the legacy methods,
// as stored and as in effect now. PUT replaces the policy of each method it names;
// every gateway applies it within one poll of the store (5 s by default).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Compile } from '../../common/typebox.js'
import { ApiError } from '../../common/errors.js'
import { nextWindow } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
import { InvalidPolicy } from '../policy/normalize.js'
import { isoSeconds } from '../../common/time.js'
import type { PolicyService } from '../policy/service.js'
import { PolicyUpdateSchema, legacyMethods, type MethodPolicy, type Policies, type PolicyUpdate } from '../policy/types.js'
import type { AuditStore } from '../audit/store.js'
import { describeSchemaError } from './admin-api.js'
import { auditTrail, operatorActor } from '../audit/audited.js'

export interface PolicyApiOptions {
  policy: PolicyService
  now?: () => number
  /** Where each change is recorded, with the method's policy before and after. */
  audit?: Pick<AuditStore, 'record'>
}

const checkUpdate = Compile(PolicyUpdateSchema)

/** A method's policy, stored fields first, then what is in effect at `now`. */
export function methodPolicyView(p: MethodPolicy, now: number) {
  const outlook = policyOutlook(p, now)
  const { state, window, next: change } = outlook
  const since = outlook.deprecatedSince
  const upcoming = state === 'brownout' && window === null ? nextWindow(p, now) : null
  return {
    ...p,
    effective: {
      state,
      /** What clients of this method are told, word for word (policy/outlook.ts). */
      summary: outlook.summary,
      /** When the method stopped working (the deny in effect began). */
      ended_at: outlook.endedAt === null ? null : isoSeconds(outlook.endedAt),
      /** When it stops working: the first scheduled deny, else the announced sunset; the Sunset header. */
      ends_at: outlook.endsAt === null ? null : isoSeconds(outlook.endsAt),
      /** True while verified requests of this method are refused (deny, or an open brownout window). */
      refusing: state === 'deny' || window !== null,
      deprecated_since: since === null ? null : isoSeconds(since),
      brownout_until: window === null ? null : isoSeconds(window.end),
      next_window: upcoming === null ? null : { start: isoSeconds(upcoming.start), end: isoSeconds(upcoming.end) },
      next_change: change === null ? null : { state: change.state, at: isoSeconds(change.at) },
    },
  }
}

export function policyView(policies: Policies, now: number, guideUrl: string) {
  return {
    guide_url: guideUrl,
    basic: methodPolicyView(policies.basic, now),
    wsse: methodPolicyView(policies.wsse, now),
    login_api: methodPolicyView(policies.login_api, now),
    oauth: { state: 'allow' as const },
  }
}

/**
 * Stores `update` (validated by the schema already), logs it and records each method it
 * changes in the audit trail, by the operator: PUT /admin/policy and the dashboard's
 * Apply. Throws InvalidPolicy, nothing changed, for a policy that makes no sense.
 */
export async function applyPolicyUpdate(
  options: Pick<PolicyApiOptions, 'policy' | 'audit'>,
  request: FastifyRequest,
  update: PolicyUpdate,
): Promise<Policies> {
  const { before, after } = await options.policy.update(update)
  const methods = legacyMethods.filter((m) => update[m] !== undefined)
  request.log.info({ methods, states: legacyMethods.map((m) => `${m}=${after[m].state}`) }, 'migration policy changed')
  for (const method of methods) {
    // A change that leaves a method as it was is not worth a line in the trail.
    if (JSON.stringify(before[method]) === JSON.stringify(after[method])) continue
    await auditTrail(options.audit, request.log)(operatorActor(request), { kind: 'policy', action: 'policy.update', target: method, before: before[method], after: after[method] })
  }
  return after
}

export async function policyApi(app: FastifyInstance, options: PolicyApiOptions): Promise<void> {
  const { policy } = options
  const now = options.now ?? Date.now

  app.get('/admin/policy', async (_request, reply) => {
    return reply.header('cache-control', 'no-store').send(policyView(policy.current(), now(), policy.guideUrl))
  })

  app.put('/admin/policy', { bodyLimit: 256 * 1024 }, async (request, reply) => {
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError(400, 'invalid_parameter', 'Invalid request body: must be a JSON object such as {"basic":{"state":"deprecate"}}')
    }
    if ('oauth' in body) throw new ApiError(400, 'invalid_parameter', 'Invalid request body: OAuth is always allowed; only "basic", "wsse" and "login_api" have a policy')
    if (!legacyMethods.some((m) => m in body)) throw new ApiError(400, 'invalid_parameter', 'Invalid request body: name at least one of "basic", "wsse" and "login_api"')
    if (!checkUpdate.Check(body)) {
      throw new ApiError(400, 'invalid_parameter', describeSchemaError(checkUpdate.Errors(body), 'body', PolicyUpdateSchema))
    }
    let updated: Policies
    try {
      updated = await applyPolicyUpdate(options, request, body)
    } catch (err) {
      if (err instanceof InvalidPolicy) throw new ApiError(400, 'invalid_parameter', `Invalid request body: ${err.message}`)
      throw err
    }
    return reply.header('cache-control', 'no-store').send(policyView(updated, now(), policy.guideUrl))
  })
}
