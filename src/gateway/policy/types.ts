// The migration policy of docs/gateway.md#the-migration-policy: one state per legacy method, optionally scheduled by
// date, with brownout windows, exceptions and a sunset date. One TypeBox definition is
// both the operator API's input schema and the stored shape (after normalizePolicy).
import { Type, type Static } from '../../common/typebox.js'
import { maxClientLength } from '../usage/client-name.js'

/**
 * The methods the policy governs. `oauth1` is OAuth 1.0a: it governs the requests whose
 * credential method (metrics, usage, the identity) is `oauth` (docs/gateway.md#oauth-10a-as-a-legacy-method).
 */
export const legacyMethods = ['basic', 'wsse', 'login_api', 'oauth1'] as const
export type LegacyMethod = (typeof legacyMethods)[number]

export const policyStates = ['allow', 'deprecate', 'brownout', 'deny'] as const
export type PolicyState = (typeof policyStates)[number]

export const isLegacyMethod = (m: string): m is LegacyMethod => (legacyMethods as readonly string[]).includes(m)

/** The credential method (metrics, usage rows, the identity's authMethod) whose requests a policy method governs. */
export const usageMethodOf = (m: LegacyMethod): string => (m === 'oauth1' ? 'oauth' : m)

/** The policy method that governs requests verified with credential method `m`; null for one no policy governs. */
export const policyMethodOf = (m: string): LegacyMethod | null => (m === 'oauth' ? 'oauth1' : isLegacyMethod(m) && m !== 'oauth1' ? m : null)

// An instant: ISO 8601 date-time with `Z` or an offset; the date alone means midnight UTC.
export const instantPattern = '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2}))?$'
export const Instant = Type.String({ pattern: instantPattern, errorMessage: 'must be an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T00:00:00Z' })
const ClockTime = Type.String({ pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$', errorMessage: 'must be a UTC time of day HH:MM (00:00 to 24:00)' })

export const PolicyStateSchema = Type.Enum([...policyStates])

/** A daily brownout window in UTC; `end` before `start` wraps past midnight. */
export const BrownoutWindow = Type.Object({ start: ClockTime, end: ClockTime }, { additionalProperties: false })

/** From `from` on, the method is in `state` (until a later entry, or a later operator change). */
export const ScheduleEntry = Type.Object({ state: PolicyStateSchema, from: Instant }, { additionalProperties: false })

/** A user (or one of a user's client names), or for oauth1 an application, still allowed in brownout or deny, until a date. */
export const PolicyException = Type.Object({
  user: Type.Optional(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{2,31}$', errorMessage: 'must be a user ID' })),
  client: Type.Optional(Type.String({ minLength: 1, maxLength: maxClientLength })),
  /** oauth1 only: an OAuth 1.0a application by its consumer key (verified by the request's signature). */
  application: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._~-]+$', errorMessage: 'must be a consumer key' })),
  until: Instant,
}, { additionalProperties: false })

export const MethodPolicySchema = Type.Object({
  state: PolicyStateSchema,
  /** When `state` took effect; set by the gateway when the state changes. */
  since: Type.Optional(Instant),
  /**
   * For `Deprecation` (RFC 9745): since when the method has been out of plain `allow`
   * without a break, as of `since`. Carried over by the gateway when a state changes
   * within deprecation; may be given to announce an earlier date.
   */
  deprecated_since: Type.Optional(Type.Union([Instant, Type.Null()])),
  /** RFC 8594: when the method is expected to stop working; null for none. */
  sunset: Type.Optional(Type.Union([Instant, Type.Null()])),
  windows: Type.Optional(Type.Array(BrownoutWindow, { maxItems: 24 })),
  schedule: Type.Optional(Type.Array(ScheduleEntry, { maxItems: 50 })),
  exceptions: Type.Optional(Type.Array(PolicyException, { maxItems: 1000 })),
  /** oauth1 only: no new OAuth 1.0a application may be registered (existing ones keep working). */
  registration_closed: Type.Optional(Type.Boolean()),
}, { additionalProperties: false })

/** PUT /admin/policy: the methods given are replaced; the others stay as they are. */
export const PolicyUpdateSchema = Type.Object({
  basic: Type.Optional(MethodPolicySchema),
  wsse: Type.Optional(MethodPolicySchema),
  login_api: Type.Optional(MethodPolicySchema),
  oauth1: Type.Optional(MethodPolicySchema),
}, { additionalProperties: false })

export type MethodPolicyInput = Static<typeof MethodPolicySchema>
export type PolicyUpdate = Static<typeof PolicyUpdateSchema>
export type BrownoutWindowSpec = Static<typeof BrownoutWindow>
export type ScheduleEntrySpec = Static<typeof ScheduleEntry>
export type PolicyExceptionSpec = Static<typeof PolicyException>

/** The stored, normalized form: every field present, instants as `…Z` to the second, schedule sorted. */
export interface MethodPolicy {
  state: PolicyState
  since: string
  deprecated_since: string | null
  sunset: string | null
  windows: BrownoutWindowSpec[]
  schedule: ScheduleEntrySpec[]
  exceptions: PolicyExceptionSpec[]
  /** Present (true) only while new OAuth 1.0a registrations are closed, so other methods' stored form is unchanged. */
  registration_closed?: true
}

export type Policies = Record<LegacyMethod, MethodPolicy>

/** Without configuration every legacy method is allowed. */
export function defaultMethodPolicy(): MethodPolicy {
  return { state: 'allow', since: '1970-01-01T00:00:00Z', deprecated_since: null, sunset: null, windows: [], schedule: [], exceptions: [] }
}

export function defaultPolicies(): Policies {
  return { basic: defaultMethodPolicy(), wsse: defaultMethodPolicy(), login_api: defaultMethodPolicy(), oauth1: defaultMethodPolicy() }
}
