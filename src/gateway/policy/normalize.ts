// Checks that go beyond the schema (dates that exist, windows that make sense, one
// subject per exception) and brings a method policy into its stored form.
import { deprecatedSince } from './evaluate.js'
import { isoSeconds } from '../../common/time.js'
import { clockMinutes } from './time.js'
import { resolveSchedule } from './schedule.js'
import type { MethodPolicy, MethodPolicyInput, PolicyState, ScheduleEntrySpec } from './types.js'

export class InvalidPolicy extends Error {
  override name = 'InvalidPolicy'
}

/** `2027-01-31T00:00:00Z` from any accepted ISO 8601 spelling; throws for a date that does not exist. */
export function parseInstant(value: string, field: string): number {
  const withTime = /T/.test(value) ? value : `${value}T00:00:00Z`
  const ms = Date.parse(withTime)
  // Date.parse rolls 2027-02-30 over to March: compare the calendar date back.
  const [y, mo, d] = value.slice(0, 10).split('-').map(Number)
  const ok = Number.isFinite(ms) && mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= new Date(Date.UTC(y!, mo, 0)).getUTCDate()
  if (!ok) throw new InvalidPolicy(`"${field}" is not a valid date-time: ${JSON.stringify(value)}`)
  return ms
}


/** The stored form of `input` for `method` (see normalizeChange). */
export function normalizePolicy(method: string, input: MethodPolicyInput, now: number, previous?: MethodPolicy): MethodPolicy {
  return normalizeChange(method, input, now, previous).policy
}

/**
 * The stored form of `input` for `method`, and the scheduled entries it replaces
 * (schedule.ts: every entry stored before that would undo this change). `previous` is the
 * policy it replaces: when the state does not change and no `since` is given, the state
 * keeps its original `since` (the Deprecation date must not move because an exception was
 * added). Schedule entries at or before `since` are superseded by the state set then and
 * are dropped; how long the method has already been deprecated is carried in
 * `deprecated_since`.
 */
export function normalizeChange(method: string, input: MethodPolicyInput, now: number, previous?: MethodPolicy): { policy: MethodPolicy; replaced: ScheduleEntrySpec[] } {
  const at = (field: string) => `${method}.${field}`
  let since: number
  if (input.since !== undefined) {
    since = parseInstant(input.since, at('since'))
    if (since > now + 1000) throw new InvalidPolicy(`"${at('since')}" is in the future; use "schedule" for a change that takes effect later`)
  } else if (previous && previous.state === input.state) {
    since = Date.parse(previous.since)
  } else {
    since = now
  }

  const sunset = input.sunset == null ? null : isoSeconds(parseInstant(input.sunset, at('sunset')))
  // A Sunset header announces when the method is expected to stop working (RFC 8594 §3):
  // a new date already past announces nothing a client can act on. A stored sunset that
  // has passed may be sent back unchanged (the CLI rewrites the whole method policy).
  if (sunset !== null && sunset !== previous?.sunset && Date.parse(sunset) < now) {
    throw new InvalidPolicy(`"${at('sunset')}" ${sunset} is in the past; a sunset announces a future date (RFC 8594): give a later one, or none`)
  }

  const windows = input.windows ?? []
  windows.forEach((w, i) => {
    if (w.start === '24:00') throw new InvalidPolicy(`"${at(`windows[${i}].start`)}" must be before 24:00`)
    if (clockMinutes(w.start) === clockMinutes(w.end)) {
      throw new InvalidPolicy(`"${at(`windows[${i}]`)}" starts and ends at ${w.start}; a window must have a length`)
    }
  })

  const stored = new Set((previous?.schedule ?? []).map((e) => `${e.state}@${isoSeconds(Date.parse(e.from))}`))
  const wasScheduled = (e: { state: PolicyState; fromText: string }) => stored.has(`${e.state}@${e.fromText}`)
  // Two entries at one instant: one stored before and one new is a replacement; two new is an error.
  const seen = new Set<number>()
  const schedule = (input.schedule ?? []).map((e, i) => {
    const from = parseInstant(e.from, at(`schedule[${i}].from`))
    return { state: e.state, from, at: from, fromText: isoSeconds(from) }
  }).sort((a, b) => a.from - b.from)
    // The same entry given twice (a change repeating one already scheduled) is one entry.
    .filter((e, i, all) => i === 0 || all[i - 1]!.from !== e.from || all[i - 1]!.state !== e.state)
  for (const e of schedule) {
    if (wasScheduled(e)) continue
    if (seen.has(e.from)) throw new InvalidPolicy(`"${at('schedule')}" has two entries at ${e.fromText}`)
    seen.add(e.from)
  }

  // Entries at or before `since` have been overtaken by the state set then; of the others,
  // those stored before that would undo this change are replaced by it.
  const { kept: pending, replaced } = resolveSchedule(previous?.state ?? 'allow', { state: input.state, at: since }, schedule.filter((e) => e.from > since), wasScheduled)
  const states: PolicyState[] = [input.state, ...pending.map((e) => e.state)]
  if (states.includes('brownout') && windows.length === 0) {
    throw new InvalidPolicy(`"${at('windows')}" must list at least one brownout window (UTC, e.g. {"start":"09:00","end":"12:00"}) when the state is or becomes brownout`)
  }

  const exceptions = (input.exceptions ?? []).map((e, i) => {
    // An application is named by its consumer key, which the request's signature proves:
    // an oauth1 exception may name one alone (every user's token of it), or with a user.
    if (e.application !== undefined && method !== 'oauth1') {
      throw new InvalidPolicy(`"${at(`exceptions[${i}].application`)}": only oauth1 exceptions name an application (by its consumer key)`)
    }
    // A client name is self-declared (the `source` parameter or the User-Agent): alone it
    // would let anyone who sends it through. It narrows a user's exception instead.
    if (e.user === undefined && e.application === undefined) {
      throw new InvalidPolicy(`"${at(`exceptions[${i}]`)}" must name a "user" (and may name one of that user's clients)${method === 'oauth1' ? ' or an "application" (its consumer key)' : ''}: a client name is self-declared by the request, so a client alone would let anyone through`)
    }
    const until = isoSeconds(parseInstant(e.until, at(`exceptions[${i}].until`)))
    return {
      ...(e.user !== undefined ? { user: e.user } : {}),
      ...(e.client !== undefined ? { client: e.client } : {}),
      ...(e.application !== undefined ? { application: e.application } : {}),
      until,
    }
  })
  if (input.registration_closed === true && method !== 'oauth1') {
    throw new InvalidPolicy(`"${at('registration_closed')}": only oauth1 closes registrations (of new OAuth 1.0a applications)`)
  }

  let deprecated: number | null = null
  if (input.state !== 'allow') {
    if (input.deprecated_since != null) {
      deprecated = parseInstant(input.deprecated_since, at('deprecated_since'))
      if (deprecated > since) throw new InvalidPolicy(`"${at('deprecated_since')}" must not be after "since"`)
    } else {
      // Still deprecated from before this change (a state set earlier, or a schedule entry)?
      deprecated = (previous ? deprecatedSince(previous, since) : null) ?? since
    }
  }

  const policy: MethodPolicy = {
    state: input.state,
    since: isoSeconds(since),
    deprecated_since: deprecated === null ? null : isoSeconds(deprecated),
    sunset,
    windows: windows.map((w) => ({ start: w.start, end: w.end })),
    schedule: pending.map((e) => ({ state: e.state, from: e.fromText })),
    exceptions,
    ...(input.registration_closed === true ? { registration_closed: true as const } : {}),
  }
  return { policy, replaced: replaced.map((e) => ({ state: e.state, from: e.fromText })) }
}
