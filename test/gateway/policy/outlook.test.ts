// What every surface says about a legacy method comes from one function (policyOutlook),
// and the headers a request gets agree with it. The table runs every state × schedule ×
// sunset × exception, and checks the rules a reader relies on:
// - a method already denied has no future end date, and its 403 carries no Sunset;
// - a scheduled deny is the sunset, announced or not;
// - a client holding an exception reads "Works until D", never "Refused";
// - the Sunset header is the date the words give.
import { describe, expect, it } from 'vitest'
import { evaluatePolicy, httpDate } from '../../../src/gateway/policy/evaluate.js'
import { normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import { policyOutlook } from '../../../src/gateway/policy/outlook.js'
import { utcMinute } from '../../../src/common/time.js'
import type { MethodPolicyInput, PolicyState } from '../../../src/gateway/policy/types.js'

const guide = 'https://kigo.example/migration'
const at = (iso: string) => Date.parse(iso)
const setAt = at('2027-01-01T00:00:00Z')
/** 10:00 UTC: inside the 09:00–12:00 brownout window. */
const inWindow = at('2027-03-01T10:00:00Z')
/** 13:00 UTC: outside it. */
const outsideWindow = at('2027-03-01T13:00:00Z')
const scheduledDenyAt = '2027-07-01T00:00:00Z'
const announcedSunset = '2027-06-30T00:00:00Z'

const alice = { user: 'alice', client: () => 'HaikuDroid/3.2' }

const states: PolicyState[] = ['allow', 'deprecate', 'brownout', 'deny']
const schedules: Record<string, MethodPolicyInput['schedule']> = {
  none: [],
  'deny later': [{ state: 'deny', from: scheduledDenyAt }],
  'brownout later': [{ state: 'brownout', from: '2027-05-01T00:00:00Z' }],
  'brownout then deny': [{ state: 'brownout', from: '2027-05-01T00:00:00Z' }, { state: 'deny', from: scheduledDenyAt }],
}
const sunsets: Record<string, string | null> = { none: null, announced: announcedSunset }
const exceptions: Record<string, MethodPolicyInput['exceptions']> = {
  none: [],
  'for alice until 2027-04-01': [{ user: 'alice', until: '2027-04-01T00:00:00Z' }],
  'for alice until 2027-09-01': [{ user: 'alice', until: '2027-09-01T00:00:00Z' }],
  'for bob': [{ user: 'bob', until: '2027-09-01T00:00:00Z' }],
  // Expired before the instants asked about: counts for nothing.
  'expired for alice': [{ user: 'alice', until: '2027-02-01T00:00:00Z' }],
}

const cases = states.flatMap((state) =>
  Object.entries(schedules).flatMap(([scheduleName, schedule]) =>
    Object.entries(sunsets).flatMap(([sunsetName, sunset]) =>
      Object.entries(exceptions).flatMap(([exceptionName, list]) =>
        [inWindow, outsideWindow].map((now) => ({
          name: `${state}, schedule ${scheduleName}, sunset ${sunsetName}, exception ${exceptionName}, ${new Date(now).toISOString().slice(11, 16)}`,
          policy: normalizePolicy('basic', { state, sunset, schedule, exceptions: list, windows: [{ start: '09:00', end: '12:00' }] }, setAt),
          now,
          excepted: exceptionName.startsWith('for alice'),
          exceptionUntil: list?.[0]?.until,
        })),
      ),
    ),
  ),
)

describe('policyOutlook over every state × schedule × sunset × exception', () => {
  it.each(cases.map((c) => [c.name, c]))('%s', (_name, c) => {
    const outlook = policyOutlook(c.policy, c.now, alice)
    const verdict = evaluatePolicy('basic', c.policy, alice, c.now, guide)

    // The request's fate is the one the words give.
    expect(verdict.allowed).toBe(!outlook.refusedNow)
    expect(outlook.summary.startsWith('Refused')).toBe(outlook.refusedNow)

    // An exception that applies reads as "works until", never as refused.
    if (c.excepted && (c.policy.state === 'deny' || c.policy.state === 'brownout')) {
      expect(outlook.refusedNow).toBe(false)
      expect(outlook.summary).toMatch(/^Works/)
      expect(outlook.summary).toContain(`until ${utcMinute(at(c.exceptionUntil!))}`)
    }

    if (!c.excepted) {
      expect(outlook.exceptionUntil).toBeNull()
      expect(outlook.summary).not.toContain('an exception')
    }

    if (c.policy.state === 'deny') {
      // Already denied: ended, no future end, and no Sunset on the answer unless this
      // client's exception gives it one.
      expect(outlook.endsAt).toBeNull()
      expect(outlook.endedAt).toBe(setAt)
      expect(outlook.summary).not.toContain('2027-06-30')
      expect(outlook.summary).not.toContain('2027-07-01')
      if (!c.excepted) {
        expect(outlook.summary).toBe('Refused: switched off since 2027-01-01 00:00 UTC.')
        expect(verdict.headers.sunset).toBeUndefined()
      }
    } else {
      // Not yet denied: a scheduled deny is the end, else the announced sunset.
      const scheduled = c.policy.schedule.find((s) => s.state === 'deny')
      const expectedEnd = scheduled ? at(scheduled.from) : c.policy.sunset ? at(c.policy.sunset) : null
      expect(outlook.endsAt).toBe(expectedEnd)
      if (expectedEnd === null) expect(outlook.summary).toContain('No end date is set yet.')
      else expect(outlook.summary).toContain(utcMinute(expectedEnd))
    }

    // The Sunset header says what the words say: this client's end, or the method's.
    if (c.policy.state !== 'allow' && verdict.allowed) {
      const end = verdict.exception ? outlook.worksUntil : outlook.endsAt
      expect(verdict.headers.sunset).toBe(end === null ? undefined : httpDate(end))
    }
  })
})

describe('the cases people reported', () => {
  it('deprecate with a sunset, then deny: the refusal names no future end', () => {
    const deprecated = normalizePolicy('wsse', { state: 'deprecate', sunset: announcedSunset }, setAt)
    const denied = normalizePolicy('wsse', { state: 'deny', sunset: announcedSunset }, at('2027-02-01T00:00:00Z'), deprecated)
    const now = at('2027-02-02T00:00:00Z')
    const verdict = evaluatePolicy('wsse', denied, alice, now, guide)
    expect(verdict.allowed).toBe(false)
    expect(verdict.headers.sunset).toBeUndefined()
    expect(policyOutlook(denied, now).summary).toBe('Refused: switched off since 2027-02-01 00:00 UTC.')
  })

  it('a scheduled deny without a sunset is the sunset', () => {
    const p = normalizePolicy('wsse', { state: 'deprecate', schedule: [{ state: 'deny', from: scheduledDenyAt }] }, setAt)
    const now = at('2027-02-01T00:00:00Z')
    expect(evaluatePolicy('wsse', p, alice, now, guide).headers.sunset).toBe('Thu, 01 Jul 2027 00:00:00 GMT')
    expect(policyOutlook(p, now).summary).toBe('Works, but is deprecated. It stops working on 2027-07-01 00:00 UTC.')
  })

  it('a client holding an exception under deny works until its date', () => {
    const p = normalizePolicy('basic', { state: 'deny', exceptions: [{ user: 'alice', until: '2027-09-01T00:00:00Z' }] }, setAt)
    const now = at('2027-02-01T00:00:00Z')
    const verdict = evaluatePolicy('basic', p, alice, now, guide)
    expect(verdict.allowed).toBe(true)
    expect(verdict.headers.sunset).toBe('Wed, 01 Sep 2027 00:00:00 GMT')
    expect(policyOutlook(p, now, alice).summary).toBe('Works until 2027-09-01 00:00 UTC (an exception for this client); refused after that.')
    expect(policyOutlook(p, now).summary).toBe('Refused: switched off since 2027-01-01 00:00 UTC.')
  })
})
