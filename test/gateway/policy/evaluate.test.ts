// The migration policy as a pure function of the policy and the clock (docs/gateway.md#the-migration-policy):
// which headers a verified legacy request gets, when it is refused, how a schedule plays
// out through time, brownout windows (also across midnight), exceptions that expire.
import { describe, expect, it } from 'vitest'
import { deprecatedSince, effectiveState, evaluatePolicy, nextChange, nextWindow, openWindow } from '../../../src/gateway/policy/evaluate.js'
import { InvalidPolicy, normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import type { MethodPolicy, MethodPolicyInput } from '../../../src/gateway/policy/types.js'

const guide = 'https://docs.example.org/migrate'
const at = (iso: string) => Date.parse(iso)
const sec = (iso: string) => `@${at(iso) / 1000}`

function policy(input: MethodPolicyInput, now = at('2027-01-01T00:00:00Z')): MethodPolicy {
  return normalizePolicy('basic', input, now)
}

const alice = { user: 'alice', client: () => 'AliceApp/1.0' }

describe('evaluatePolicy per state', () => {
  it('allow: accepted without any header', () => {
    const v = evaluatePolicy('basic', policy({ state: 'allow' }), alice, at('2027-01-02T00:00:00Z'), guide)
    expect(v).toEqual({ allowed: true, state: 'allow', headers: {}, exception: false })
  })

  it('deprecate: Deprecation is when deprecation took effect (RFC 9745), Link to the guide, no Sunset unless set', () => {
    const p = policy({ state: 'deprecate' }, at('2027-01-01T10:00:00Z'))
    const v = evaluatePolicy('basic', p, alice, at('2027-03-01T00:00:00Z'), guide)
    expect(v.allowed).toBe(true)
    expect(v.headers).toEqual({ deprecation: sec('2027-01-01T10:00:00Z'), link: `<${guide}>; rel="deprecation"; type="text/html"` })
  })

  it('deprecate with a sunset date: Sunset as an HTTP-date (RFC 8594)', () => {
    const p = policy({ state: 'deprecate', sunset: '2027-06-30T00:00:00Z' })
    const v = evaluatePolicy('wsse', p, alice, at('2027-02-01T00:00:00Z'), guide)
    expect(v.headers.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT')
  })

  it('brownout: accepted with the headers outside the windows, 403 method_retired_temporarily inside', () => {
    const p = policy({ state: 'brownout', windows: [{ start: '09:00', end: '12:00' }, { start: '21:00', end: '24:00' }] })
    const outside = evaluatePolicy('basic', p, alice, at('2027-01-05T08:59:59Z'), guide)
    expect(outside.allowed).toBe(true)
    expect(outside.headers.deprecation).toBe(sec('2027-01-01T00:00:00Z'))
    expect(outside.headers.link).toContain(guide)

    const inside = evaluatePolicy('basic', p, alice, at('2027-01-05T09:00:00Z'), guide)
    expect(inside.allowed).toBe(false)
    if (inside.allowed) return
    expect(inside.status).toBe(403)
    expect(inside.code).toBe('method_retired_temporarily')
    expect(inside.message).toContain(guide)
    expect(inside.message).toContain('12:00 UTC')
    expect(inside.headers.link).toBe(`<${guide}>; rel="deprecation"; type="text/html"`)

    expect(evaluatePolicy('basic', p, alice, at('2027-01-05T11:59:59Z'), guide).allowed).toBe(false)
    expect(evaluatePolicy('basic', p, alice, at('2027-01-05T12:00:00Z'), guide).allowed).toBe(true)
    expect(evaluatePolicy('basic', p, alice, at('2027-01-05T23:30:00Z'), guide).allowed).toBe(false)
    expect(evaluatePolicy('basic', p, alice, at('2027-01-06T00:00:00Z'), guide).allowed).toBe(true)
  })

  it('a window that wraps past midnight is open on both sides of it', () => {
    const p = policy({ state: 'brownout', windows: [{ start: '22:00', end: '01:00' }] })
    expect(openWindow(p, at('2027-01-05T21:59:00Z'))).toBeNull()
    expect(openWindow(p, at('2027-01-05T23:00:00Z'))).toEqual({ start: at('2027-01-05T22:00:00Z'), end: at('2027-01-06T01:00:00Z') })
    expect(openWindow(p, at('2027-01-06T00:30:00Z'))).toEqual({ start: at('2027-01-05T22:00:00Z'), end: at('2027-01-06T01:00:00Z') })
    expect(openWindow(p, at('2027-01-06T01:00:00Z'))).toBeNull()
    expect(nextWindow(p, at('2027-01-06T01:00:00Z'))).toEqual({ start: at('2027-01-06T22:00:00Z'), end: at('2027-01-07T01:00:00Z') })
  })

  it('deny: 403 method_retired with the guide in the message and the Link header, and no Sunset (it has ended)', () => {
    const v = evaluatePolicy('wsse', policy({ state: 'deny', sunset: '2027-01-01T00:00:00Z' }), alice, at('2027-02-01T00:00:00Z'), guide)
    expect(v.allowed).toBe(false)
    if (v.allowed) return
    expect(v.code).toBe('method_retired')
    expect(v.message).toMatch(/WSSE.*retired/)
    expect(v.message).toContain(guide)
    expect(v.headers.link).toContain(`<${guide}>`)
    expect(v.headers.sunset).toBeUndefined()
  })
})

describe('exceptions', () => {
  const p = policy({
    state: 'deny',
    exceptions: [
      { user: 'alice', until: '2027-03-01T00:00:00Z' },
      { user: 'bob', client: 'LegacyBot/2', until: '2027-02-01T00:00:00Z' },
    ],
  })

  it('let a named user through in deny, with the deprecation headers, until the date', () => {
    const before = evaluatePolicy('basic', p, { user: 'alice', client: () => 'x' }, at('2027-02-28T23:59:59Z'), guide)
    expect(before).toMatchObject({ allowed: true, state: 'deny', exception: true })
    expect(before.headers.link).toContain(guide)
    expect(evaluatePolicy('basic', p, { user: 'alice', client: () => 'x' }, at('2027-03-01T00:00:00Z'), guide).allowed).toBe(false)
    expect(evaluatePolicy('basic', p, { user: 'bob', client: () => 'x' }, at('2027-01-15T00:00:00Z'), guide).allowed).toBe(false)
  })

  it('let a user\'s named client through until its date, and only for that user (the name is self-declared)', () => {
    const bob = { user: 'bob', client: () => 'LegacyBot/2' }
    expect(evaluatePolicy('basic', p, bob, at('2027-01-31T23:59:59Z'), guide).allowed).toBe(true)
    expect(evaluatePolicy('basic', p, bob, at('2027-02-01T00:00:00Z'), guide).allowed).toBe(false)
    expect(evaluatePolicy('basic', p, { user: 'bob', client: () => 'OtherApp' }, at('2027-01-15T00:00:00Z'), guide).allowed).toBe(false)
    expect(evaluatePolicy('basic', p, { user: 'mallory', client: () => 'LegacyBot/2' }, at('2027-01-15T00:00:00Z'), guide).allowed).toBe(false)
  })

  it('an exception stored with a client alone (before this rule) lets nobody through', () => {
    const old = { ...policy({ state: 'deny' }), exceptions: [{ client: 'LegacyBot/2', until: '2027-02-01T00:00:00Z' }] }
    expect(evaluatePolicy('basic', old, { user: 'bob', client: () => 'LegacyBot/2' }, at('2027-01-15T00:00:00Z'), guide).allowed).toBe(false)
  })

  it('apply inside brownout windows too, and the client name is read only when a client exception is live', () => {
    const b = policy({ state: 'brownout', windows: [{ start: '00:00', end: '24:00' }], exceptions: [{ user: 'carol', until: '2027-12-31' }] })
    let asked = 0
    const dave = { user: 'dave', client: () => String(++asked) }
    expect(evaluatePolicy('wsse', b, dave, at('2027-05-01T10:00:00Z'), guide).allowed).toBe(false)
    expect(asked).toBe(0)
    expect(evaluatePolicy('wsse', b, { user: 'carol', client: () => '' }, at('2027-05-01T10:00:00Z'), guide).allowed).toBe(true)
  })
})

describe('a schedule through time', () => {
  // Set on 1 January: allowed now; deprecated from February, brownouts from March, off in April.
  const p = policy({
    state: 'allow',
    sunset: '2027-04-01T00:00:00Z',
    windows: [{ start: '10:00', end: '13:00' }, { start: '16:00', end: '19:00' }],
    schedule: [
      { state: 'deny', from: '2027-04-01T00:00:00Z' },
      { state: 'deprecate', from: '2027-02-01T00:00:00Z' },
      { state: 'brownout', from: '2027-03-01T00:00:00Z' },
    ],
  }, at('2027-01-01T00:00:00Z'))

  it('is stored in time order', () => {
    expect(p.schedule.map((e) => e.state)).toEqual(['deprecate', 'brownout', 'deny'])
  })

  const cases: Array<[string, string, boolean, string | null]> = [
    ['2027-01-20T11:00:00Z', 'allow', true, null],
    ['2027-02-10T11:00:00Z', 'deprecate', true, '2027-02-01T00:00:00Z'],
    ['2027-03-10T09:59:59Z', 'brownout', true, '2027-02-01T00:00:00Z'],
    ['2027-03-10T11:00:00Z', 'brownout', false, '2027-02-01T00:00:00Z'],
    ['2027-03-10T17:00:00Z', 'brownout', false, '2027-02-01T00:00:00Z'],
    ['2027-03-10T19:00:00Z', 'brownout', true, '2027-02-01T00:00:00Z'],
    ['2027-04-01T00:00:00Z', 'deny', false, '2027-02-01T00:00:00Z'],
  ]
  for (const [when, state, allowed, deprecation] of cases) {
    it(`at ${when}: ${state}, ${allowed ? 'accepted' : 'refused'}`, () => {
      const v = evaluatePolicy('basic', p, alice, at(when), guide)
      expect(v.state).toBe(state)
      expect(v.allowed).toBe(allowed)
      if (deprecation === null) {
        expect(v.headers).toEqual({})
      } else {
        expect(v.headers.deprecation).toBe(sec(deprecation))
        // The end until the deny takes effect; none after it.
        expect(v.headers.sunset).toBe(state === 'deny' ? undefined : 'Thu, 01 Apr 2027 00:00:00 GMT')
      }
    })
  }

  it('names the next change', () => {
    expect(nextChange(p, at('2027-01-20T00:00:00Z'))).toEqual({ state: 'deprecate', at: at('2027-02-01T00:00:00Z') })
    expect(nextChange(p, at('2027-03-20T00:00:00Z'))).toEqual({ state: 'deny', at: at('2027-04-01T00:00:00Z') })
    expect(nextChange(p, at('2027-04-20T00:00:00Z'))).toBeNull()
  })

  it('never names as next the state already in effect (a deny pending under a deny stored before one schedule)', () => {
    const stored: MethodPolicy = { ...normalizePolicy('basic', { state: 'deny' }, at('2027-01-01T00:00:00Z')), schedule: [{ state: 'deny', from: '2027-03-01T00:00:00Z' }, { state: 'deprecate', from: '2027-05-01T00:00:00Z' }] }
    expect(nextChange(stored, at('2027-02-01T00:00:00Z'))).toEqual({ state: 'deprecate', at: at('2027-05-01T00:00:00Z') })
  })

  it('an operator change made later wins over past schedule entries; going back to allow ends the deprecation', () => {
    const reopened = normalizePolicy('basic', { ...p, state: 'allow', since: undefined, deprecated_since: undefined }, at('2027-04-10T00:00:00Z'), { ...p, state: 'deny' })
    expect(effectiveState(reopened, at('2027-04-11T00:00:00Z'))).toBe('allow')
    expect(deprecatedSince(reopened, at('2027-04-11T00:00:00Z'))).toBeNull()
    const again = normalizePolicy('basic', { ...reopened, state: 'deprecate', since: undefined, deprecated_since: undefined }, at('2027-05-01T00:00:00Z'), reopened)
    expect(evaluatePolicy('basic', again, alice, at('2027-05-02T00:00:00Z'), guide).headers.deprecation).toBe(sec('2027-05-01T00:00:00Z'))
  })
})

describe('normalizePolicy', () => {
  it('keeps `since` when the state does not change, and moves it when it does', () => {
    const first = normalizePolicy('wsse', { state: 'deprecate' }, at('2027-01-01T00:00:00Z'))
    const withException = normalizePolicy('wsse', { state: 'deprecate', exceptions: [{ user: 'alice', until: '2027-06-01' }] }, at('2027-02-01T00:00:00Z'), first)
    expect(withException.since).toBe('2027-01-01T00:00:00Z')
    expect(withException.exceptions).toEqual([{ user: 'alice', until: '2027-06-01T00:00:00Z' }])
    const denied = normalizePolicy('wsse', { state: 'deny' }, at('2027-03-01T12:34:56.789Z'), withException)
    expect(denied.since).toBe('2027-03-01T12:34:56Z')
  })

  it('carries the deprecation date across a state change within deprecation, and drops overtaken schedule entries', () => {
    const planned = normalizePolicy('basic', { state: 'allow', schedule: [{ state: 'deprecate', from: '2027-02-01T00:00:00Z' }] }, at('2027-01-01T00:00:00Z'))
    const brownout = normalizePolicy('basic', { ...planned, since: undefined, deprecated_since: undefined, state: 'brownout', windows: [{ start: '10:00', end: '13:00' }] }, at('2027-03-15T08:00:00Z'), planned)
    expect(brownout.schedule).toEqual([])
    expect(brownout.deprecated_since).toBe('2027-02-01T00:00:00Z')
    expect(evaluatePolicy('basic', brownout, alice, at('2027-03-16T08:00:00Z'), guide).headers.deprecation).toBe(sec('2027-02-01T00:00:00Z'))
  })

  it('takes an announced deprecation date that is not after `since`', () => {
    const p = normalizePolicy('basic', { state: 'deprecate', deprecated_since: '2026-12-01T00:00:00Z' }, at('2027-01-01T00:00:00Z'))
    expect(evaluatePolicy('basic', p, alice, at('2027-01-02T00:00:00Z'), guide).headers.deprecation).toBe(sec('2026-12-01T00:00:00Z'))
    expect(() => normalizePolicy('basic', { state: 'deprecate', deprecated_since: '2027-02-01T00:00:00Z' }, at('2027-01-01T00:00:00Z'))).toThrow(/after/)
  })

  it('reads offsets and date-only values as instants', () => {
    const p = normalizePolicy('basic', { state: 'deprecate', sunset: '2027-07-01T09:00:00+09:00' }, 0)
    expect(p.sunset).toBe('2027-07-01T00:00:00Z')
  })

  const bad: Array<[string, MethodPolicyInput, RegExp]> = [
    ['brownout without a window', { state: 'brownout' }, /window/],
    ['a scheduled brownout without a window', { state: 'allow', schedule: [{ state: 'brownout', from: '2027-02-01T00:00:00Z' }] }, /window/],
    ['a window of no length', { state: 'brownout', windows: [{ start: '10:00', end: '10:00' }] }, /length/],
    ['a date that does not exist', { state: 'deprecate', sunset: '2027-02-30T00:00:00Z' }, /sunset/],
    ['an exception naming a client alone', { state: 'deny', exceptions: [{ client: 'x', until: '2027-01-02' }] }, /self-declared/],
    ['an exception naming neither', { state: 'deny', exceptions: [{ until: '2027-01-02' }] }, /must name a "user"/],
    ['two schedule entries at one instant', { state: 'allow', schedule: [{ state: 'deny', from: '2027-02-01' }, { state: 'deprecate', from: '2027-02-01T00:00:00Z' }] }, /two entries/],
    ['a `since` in the future', { state: 'deny', since: '2030-01-01T00:00:00Z' }, /future/],
  ]
  for (const [name, input, message] of bad) {
    it(`refuses ${name}`, () => {
      expect(() => normalizePolicy('basic', input, at('2027-01-01T00:00:00Z'))).toThrow(InvalidPolicy)
      expect(() => normalizePolicy('basic', input, at('2027-01-01T00:00:00Z'))).toThrow(message)
    })
  }
})

describe('evaluatePolicy over time with one policy object', () => {
  it('gives each instant its own verdict on both sides of a scheduled change, in any order of asking', () => {
    const p = policy({ state: 'deprecate', sunset: '2027-09-01T00:00:00Z', schedule: [{ state: 'deny', from: '2027-06-01T00:00:00Z' }] }, at('2027-01-01T10:00:00Z'))
    const before = at('2027-05-31T23:59:59Z')
    const after = at('2027-06-01T00:00:00Z')
    // Asked after, then before, then after again: none may be answered from another's stretch.
    for (const now of [after, before, after, before, at('2027-02-01T00:00:00Z')]) {
      const v = evaluatePolicy('basic', p, alice, now, guide)
      expect(v.allowed).toBe(now < after)
      expect(v.state).toBe(now < after ? 'deprecate' : 'deny')
      expect(v.headers.deprecation).toBe(sec('2027-01-01T10:00:00Z'))
      // The scheduled deny is the end, before the announced date; once denied, no end.
      expect(v.headers.sunset).toBe(now < after ? 'Tue, 01 Jun 2027 00:00:00 GMT' : undefined)
    }
    // The guide's address is part of what is kept.
    expect(evaluatePolicy('basic', p, alice, before, 'https://other.example/guide').headers.link).toBe('<https://other.example/guide>; rel="deprecation"; type="text/html"')
  })

  it('hands out headers no caller can change for the next request', () => {
    const p = policy({ state: 'deprecate' }, at('2027-01-01T10:00:00Z'))
    const first = evaluatePolicy('basic', p, alice, at('2027-03-01T00:00:00Z'), guide)
    expect(() => Object.assign(first.headers, { deprecation: 'changed' })).toThrow(TypeError)
    expect(evaluatePolicy('basic', p, alice, at('2027-03-02T00:00:00Z'), guide).headers.deprecation).toBe(sec('2027-01-01T10:00:00Z'))
  })
})
