// Pure evaluation of a method's migration policy at an instant (docs/gateway.md#the-migration-policy): which state
// is in effect, whether a brownout window is open, since when the method is deprecated,
// and what a verified request of that method gets: the deprecation headers, or a 403.
import { utcClock } from '../../common/time.js'
import { clockMinutes } from './time.js'
import type { LegacyMethod, MethodPolicy, PolicyState } from './types.js'

export interface PolicySubject {
  user: string
  /** oauth1: the application (consumer key) the request was signed by. */
  application?: string
  /** The client name (docs/gateway.md#the-usage-report); asked for only when a client exception could match. */
  client: () => string
}

export type PolicyVerdict =
  | { allowed: true; state: PolicyState; headers: Record<string, string>; exception: boolean }
  | { allowed: false; state: PolicyState; status: 403; code: 'method_retired' | 'method_retired_temporarily'; message: string; headers: Record<string, string> }

interface Change {
  state: PolicyState
  at: number
  /** The base state's deprecation start, which may lie before `since`. */
  deprecatedFrom?: number
}

/**
 * Each policy's timeline and the verdict's parts for the stretch of it in effect, made
 * once and reused while the clock stays within that stretch. Policies are values: a
 * refresh or an update makes new objects and never changes one in place, so an object
 * is its own cache key. A legacy request in the deprecated state cost 2.2 µs here,
 * parsing the policy's dates and formatting its headers again each time.
 */
const timelines = new WeakMap<MethodPolicy, Change[]>()
const stretches = new WeakMap<MethodPolicy, Stretch>()

/** Between two changes of a timeline, the state and the deprecation headers stay the same. */
interface Stretch {
  from: number
  until: number
  guideUrl: string
  state: PolicyState
  headers: Readonly<Record<string, string>>
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({})

/** The base state (at `since`) and the schedule (entries after `since`), in time order. */
function timeline(policy: MethodPolicy): Change[] {
  let changes = timelines.get(policy)
  if (changes === undefined) {
    changes = buildTimeline(policy)
    timelines.set(policy, changes)
  }
  return changes
}

function buildTimeline(policy: MethodPolicy): Change[] {
  const since = Date.parse(policy.since)
  const base: Change = { state: policy.state, at: since }
  if (policy.deprecated_since !== null) base.deprecatedFrom = Date.parse(policy.deprecated_since)
  const changes: Change[] = [base]
  for (const e of policy.schedule) {
    const at = Date.parse(e.from)
    if (at > since) changes.push({ state: e.state, at })
  }
  return changes.sort((a, b) => a.at - b.at)
}

/** The state in effect at `now`: the latest change that has taken effect, else allow. */
export function effectiveState(policy: MethodPolicy, now: number): PolicyState {
  let state: PolicyState = 'allow'
  for (const c of timeline(policy)) if (c.at <= now) state = c.state
  return state
}

/**
 * When the method stopped being plainly allowed, for `Deprecation: @<seconds>` (RFC 9745
 * §2.1): the start of the unbroken run of non-allow states that includes `now`; null
 * while the method is allowed.
 */
export function deprecatedSince(policy: MethodPolicy, now: number): number | null {
  let start: number | null = null
  for (const c of timeline(policy)) {
    if (c.at > now) break
    if (c.state === 'allow') start = null
    else start ??= Math.min(c.at, c.deprecatedFrom ?? c.at)
  }
  return start
}

/**
 * The next scheduled change of state after `now`, if any: an entry that sets the state
 * already in effect changes nothing (a policy stored before one schedule replaced such
 * entries may still hold one), so it is never announced as "next".
 */
export function nextChange(policy: MethodPolicy, now: number): { state: PolicyState; at: number } | null {
  let state: PolicyState = 'allow'
  for (const c of timeline(policy)) {
    if (c.at > now && c.state !== state) return { state: c.state, at: c.at }
    state = c.state
  }
  return null
}

const dayMs = 86_400_000
const minuteMs = 60_000

/** The brownout window open at `now` (UTC), with the instant it closes; null when none is open. */
export function openWindow(policy: MethodPolicy, now: number): { start: number; end: number } | null {
  const dayStart = now - (((now % dayMs) + dayMs) % dayMs)
  const minute = (now - dayStart) / minuteMs
  for (const w of policy.windows) {
    const s = clockMinutes(w.start)
    const e = clockMinutes(w.end)
    if (s < e) {
      if (minute >= s && minute < e) return { start: dayStart + s * minuteMs, end: dayStart + e * minuteMs }
    } else if (minute >= s) {
      return { start: dayStart + s * minuteMs, end: dayStart + dayMs + e * minuteMs }
    } else if (minute < e) {
      return { start: dayStart - dayMs + s * minuteMs, end: dayStart + e * minuteMs }
    }
  }
  return null
}

/** The next brownout window to open after `now` (within a day), for the dashboard. */
export function nextWindow(policy: MethodPolicy, now: number): { start: number; end: number } | null {
  let best: { start: number; end: number } | null = null
  const dayStart = now - (((now % dayMs) + dayMs) % dayMs)
  for (const day of [dayStart, dayStart + dayMs]) {
    for (const w of policy.windows) {
      const s = day + clockMinutes(w.start) * minuteMs
      let e = day + clockMinutes(w.end) * minuteMs
      if (e <= s) e += dayMs
      if (s > now && (best === null || s < best.start)) best = { start: s, end: e }
    }
  }
  return best
}

/**
 * The method's end, the one date every surface calls its sunset: when the deny in effect
 * took effect (`endedAt`), or else when it is to stop working (`endsAt`): the first
 * scheduled deny, else the announced sunset (RFC 8594 allows one that has passed). A
 * deny in effect has no future end.
 */
export function endOf(policy: MethodPolicy, now: number): { endedAt: number | null; endsAt: number | null } {
  let endedAt: number | null = null
  let endsAt: number | null = null
  for (const c of timeline(policy)) {
    if (c.at <= now) endedAt = c.state === 'deny' ? (endedAt ?? c.at) : null
    else if (c.state === 'deny' && endsAt === null) endsAt = c.at
  }
  if (endedAt !== null) return { endedAt, endsAt: null }
  return { endedAt: null, endsAt: endsAt ?? (policy.sunset === null ? null : Date.parse(policy.sunset)) }
}

/**
 * The end of the latest unexpired exception for the (verified) user, for any of their
 * clients or for the one named, or (oauth1) for the application the request was signed by,
 * with or without a user (docs/gateway.md#the-migration-policy); null when none applies. A client name is
 * self-declared, so it only narrows a user's exception: an exception naming a client and
 * no user (stored before this rule) matches nobody.
 */
export function exceptionEnd(policy: MethodPolicy, subject: PolicySubject, now: number): number | null {
  let client: string | undefined
  let until: number | null = null
  for (const e of policy.exceptions) {
    const t = Date.parse(e.until)
    if (t <= now || (e.user === undefined && e.application === undefined)) continue
    if (e.user !== undefined && e.user !== subject.user) continue
    if (e.application !== undefined && e.application !== subject.application) continue
    if (e.client !== undefined && e.client !== (client ??= subject.client())) continue
    until = until === null ? t : Math.max(until, t)
  }
  return until
}

/** RFC 9110 §5.6.7 IMF-fixdate, the format RFC 8594 requires for Sunset. */
export const httpDate = (ms: number): string => new Date(ms).toUTCString()

export const methodNames: Record<LegacyMethod, string> = { basic: 'HTTP Basic authentication', wsse: 'WSSE authentication', login_api: 'The login API', oauth1: 'OAuth 1.0a' }

/** What a refused client moves to. */
const movesTo = (method: LegacyMethod): string => (method === 'oauth1' ? 'OAuth 2.0' : 'OAuth')

/**
 * Deprecation (RFC 9745), Sunset (RFC 8594: the method's end, see `endOf`; none once it is
 * denied) and the guide as rel="deprecation" (RFC 9745 §3).
 */
function deprecationHeaders(policy: MethodPolicy, now: number, guideUrl: string): Record<string, string> {
  const headers: Record<string, string> = {}
  const since = deprecatedSince(policy, now)
  if (since !== null) headers.deprecation = `@${Math.floor(since / 1000)}`
  const { endsAt } = endOf(policy, now)
  if (endsAt !== null) headers.sunset = httpDate(endsAt)
  headers.link = `<${guideUrl}>; rel="deprecation"; type="text/html"`
  return headers
}

/** The stretch of `policy`'s timeline that holds `now`: its state and deprecation headers (frozen: shared by every request in it). */
function stretchAt(policy: MethodPolicy, now: number, guideUrl: string): Stretch {
  const known = stretches.get(policy)
  if (known !== undefined && known.from <= now && now < known.until && known.guideUrl === guideUrl) return known
  let from = -Infinity
  let until = Infinity
  for (const c of timeline(policy)) {
    if (c.at > now) {
      until = c.at
      break
    }
    from = c.at
  }
  const state = effectiveState(policy, now)
  const headers = state === 'allow' ? noHeaders : Object.freeze(deprecationHeaders(policy, now, guideUrl))
  const stretch = { from, until, guideUrl, state, headers }
  stretches.set(policy, stretch)
  return stretch
}

/**
 * What a request that verified with `method` gets at `now`. Only verified requests are
 * evaluated: failed credentials are answered by authentication as before.
 */
export function evaluatePolicy(method: LegacyMethod, policy: MethodPolicy, subject: PolicySubject, now: number, guideUrl: string): PolicyVerdict {
  const { state, headers } = stretchAt(policy, now, guideUrl)
  if (state === 'allow') return { allowed: true, state, headers, exception: false }
  if (state === 'deprecate') return { allowed: true, state, headers, exception: false }
  const window = state === 'brownout' ? openWindow(policy, now) : null
  if (state === 'brownout' && window === null) return { allowed: true, state, headers, exception: false }
  const excepted = exceptionEnd(policy, subject, now)
  if (excepted !== null) {
    // This client's sunset: under deny, its exception's end; otherwise the method's end,
    // or the exception's when that comes later (policy/outlook.ts says the same).
    const { endsAt } = endOf(policy, now)
    const end = state === 'deny' ? excepted : endsAt === null ? null : Math.max(excepted, endsAt)
    return { allowed: true, state, headers: end === null ? headers : { ...headers, sunset: httpDate(end) }, exception: true }
  }
  const name = methodNames[method]
  if (window !== null) {
    return {
      allowed: false,
      state,
      status: 403,
      code: 'method_retired_temporarily',
      message: `${name} is switched off until ${utcClock(window.end)} UTC (a scheduled brownout before its retirement); move this client to ${movesTo(method)}. Migration guide: ${guideUrl}`,
      // The window's end is known: RFC 9110 §10.2.3 lets a client that must retry wait for it.
      headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil((window.end - now) / 1000))) },
    }
  }
  return {
    allowed: false,
    state,
    status: 403,
    code: 'method_retired',
    message: `${name} has been retired; use ${movesTo(method)}. Migration guide: ${guideUrl}`,
    headers,
  }
}
