// GET/PUT /admin/policy (docs/gateway.md#the-migration-policy, docs/gateway.md#the-operator-api-and-dashboard): the migration policy of the legacy methods,
// as stored and as in effect now. PUT replaces the policy of each method it names;
// every gateway applies it within one poll of the store (5 s by default). GET gives the
// policy's version (`ETag`, and `version` in the body); a PUT with `If-Match` is a
// compare-and-set (RFC 9110 §13.1.1): a version that is no longer the stored one is 412
// and nothing changes. A PUT without `If-Match` is still accepted, as before versions.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Compile } from '../../common/typebox.js'
import { ApiError } from '../../common/errors.js'
import { nextWindow } from '../policy/evaluate.js'
import { policyOutlook } from '../policy/outlook.js'
import { InvalidPolicy } from '../policy/normalize.js'
import { isoSeconds } from '../../common/time.js'
import { StalePolicy, type PolicyService, type PolicyWrite } from '../policy/service.js'
import { PolicyUpdateSchema, legacyMethods, type MethodPolicy, type Policies, type PolicyUpdate } from '../policy/types.js'
import type { AuditStore } from '../audit/store.js'
import { describeSchemaError } from '../registrations/route-schemas.js'
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

export function policyView(policies: Policies, version: string, now: number, guideUrl: string) {
  return {
    guide_url: guideUrl,
    /** The version this policy is (the ETag): what a write names in If-Match. */
    version,
    basic: methodPolicyView(policies.basic, now),
    wsse: methodPolicyView(policies.wsse, now),
    login_api: methodPolicyView(policies.login_api, now),
    /** OAuth 1.0a: the requests counted as method oauth in metrics and usage. */
    oauth1: methodPolicyView(policies.oauth1, now),
    /** Where OAuth 1.0a moves to: always allowed. */
    oauth2: { state: 'allow' as const },
  }
}

/**
 * Makes one compare-and-set change of the policy (`make` answers the update from the stored
 * policy and its version, or throws StalePolicy), logs it and records each method it
 * changes in the audit trail, by the operator, with the scheduled entries it replaced:
 * PUT /admin/policy and the dashboard's Apply. Throws InvalidPolicy or StalePolicy, nothing
 * changed.
 */
export async function applyPolicyChange(
  options: Pick<PolicyApiOptions, 'policy' | 'audit'>,
  request: FastifyRequest,
  make: (before: Policies, version: string) => PolicyUpdate,
): Promise<PolicyWrite> {
  const write = await options.policy.change(make)
  const methods = legacyMethods.filter((m) => write.changed[m] !== undefined)
  if (methods.length > 0) request.log.info({ methods, states: legacyMethods.map((m) => `${m}=${write.after[m].state}`), replaced: write.replaced.length }, 'migration policy changed')
  for (const method of methods) {
    const replaced = write.replaced.filter((e) => e.method === method).map(({ state, from }) => ({ state, from }))
    await auditTrail(options.audit, request.log)(operatorActor(request), {
      kind: 'policy',
      action: 'policy.update',
      target: method,
      before: write.before[method],
      // The entries this change replaced, beside the policy it left (the schedule's diff alone would not say why they went).
      after: replaced.length === 0 ? write.after[method] : { ...write.after[method], replaced },
    })
  }
  return write
}

/** The entity-tag of a version (RFC 9110 §8.8.3): strong, quoted. */
export const versionTag = (version: string) => `"${version}"`

/**
 * Whether `If-Match` holds for `version` (RFC 9110 §13.1.1): `*`, or one of its strong
 * entity-tags is the version's; a weak tag never matches. Absent: true.
 */
export function ifMatchHolds(header: string | undefined, version: string): boolean {
  if (header === undefined) return true
  if (header.trim() === '*') return true
  return header.split(',').map((t) => t.trim()).includes(versionTag(version))
}

export async function policyApi(app: FastifyInstance, options: PolicyApiOptions): Promise<void> {
  const { policy } = options
  const now = options.now ?? Date.now

  app.get('/admin/policy', async (request, reply) => {
    // The stored policy, not this gateway's copy of up to one poll ago: its version is what
    // a write will be compared with. With the store away, the copy in force is answered.
    await policy.refresh().catch((err: unknown) => request.log.warn({ err: { message: (err as Error).message } }, 'policy read failed; answering the copy in force'))
    return reply.header('cache-control', 'no-store').header('etag', versionTag(policy.version())).send(policyView(policy.current(), policy.version(), now(), policy.guideUrl))
  })

  app.put('/admin/policy', { bodyLimit: 256 * 1024 }, async (request, reply) => {
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new ApiError(400, 'invalid_parameter', 'Invalid request body: must be a JSON object such as {"basic":{"state":"deprecate"}}')
    }
    if ('oauth' in body) throw new ApiError(400, 'invalid_parameter', 'Invalid request body: OAuth 1.0a\'s policy is "oauth1" (its requests are counted as method oauth); OAuth 2.0 and OpenID Connect are always allowed')
    if ('oauth2' in body || 'oidc' in body) throw new ApiError(400, 'invalid_parameter', 'Invalid request body: OAuth 2.0 and OpenID Connect are always allowed; only "basic", "wsse", "login_api" and "oauth1" have a policy')
    if (!legacyMethods.some((m) => m in body)) throw new ApiError(400, 'invalid_parameter', 'Invalid request body: name at least one of "basic", "wsse", "login_api" and "oauth1"')
    if (!checkUpdate.Check(body)) {
      throw new ApiError(400, 'invalid_parameter', describeSchemaError(checkUpdate.Errors(body), 'body', PolicyUpdateSchema))
    }
    const ifMatch = request.headers['if-match']
    let write: PolicyWrite
    try {
      write = await applyPolicyChange(options, request, (_before, version) => {
        if (!ifMatchHolds(ifMatch, version)) throw new StalePolicy(`The policy changed since it was read: If-Match ${ifMatch} is not its version (${versionTag(version)}); nothing was changed. Read it again (GET /admin/policy) and make the change against it.`)
        return body
      })
    } catch (err) {
      if (err instanceof InvalidPolicy) throw new ApiError(400, 'invalid_parameter', `Invalid request body: ${err.message}`)
      if (err instanceof StalePolicy) throw new ApiError(412, 'precondition_failed', err.message)
      throw err
    }
    return reply.header('cache-control', 'no-store').header('etag', versionTag(write.version)).send({
      ...policyView(write.after, write.version, now(), policy.guideUrl),
      /** The scheduled entries this change replaced (they would have undone it). */
      replaced: write.replaced,
    })
  })
}
