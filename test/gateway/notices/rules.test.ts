// The notices' rules as pure functions (src/gateway/notices/rules.ts): which steps a
// method's policy makes due, and which of them one recipient is told.
import { describe, expect, it } from 'vitest'
import { normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import type { MethodPolicyInput } from '../../../src/gateway/policy/types.js'
import { dueSteps, recipientSteps, refusalAt, type NoticeStep, type RecipientClient } from '../../../src/gateway/notices/rules.js'

const day = 86_400_000
const t0 = Date.parse('2027-01-01T00:00:00Z')
const policy = (input: MethodPolicyInput, at = t0) => normalizePolicy('basic', input, at)
const iso = (ms: number) => new Date(ms).toISOString()
const client = (c: Partial<RecipientClient> = {}): RecipientClient => ({ lastSeen: t0 - day, refusedByPolicy: 0, moved: false, excepted: false, ...c })
const told = (entries: Array<[NoticeStep, number]>, refusalAt: number | null = null) => ({ steps: new Map(entries), refusalAt })

describe('dueSteps', () => {
  it('nothing while the method is allowed and nothing is scheduled', () => {
    expect(dueSteps(policy({ state: 'allow' }), t0 + day).steps).toEqual([])
  })

  it('announced once the method is deprecated, or a deny is scheduled while allowed', () => {
    expect(dueSteps(policy({ state: 'deprecate' }), t0 + day).steps).toEqual(['announced'])
    expect(dueSteps(policy({ state: 'allow', schedule: [{ state: 'deny', from: iso(t0 + 60 * day) }] }), t0 + day).steps).toEqual(['announced'])
  })

  it('a scheduled change back to allow alone announces nothing', () => {
    expect(dueSteps(policy({ state: 'allow', schedule: [{ state: 'allow', from: iso(t0 + 60 * day) }] }), t0 + day).steps).toEqual([])
  })

  it('reminder_7d from 7 days before the deny, reminder_1d from 1 day before, retired once it took effect', () => {
    const p = policy({ state: 'deprecate', schedule: [{ state: 'deny', from: iso(t0 + 30 * day) }] })
    expect(dueSteps(p, t0 + 22 * day).steps).toEqual(['announced'])
    expect(dueSteps(p, t0 + 23 * day).steps).toEqual(['announced', 'reminder_7d'])
    expect(dueSteps(p, t0 + 29 * day).steps).toEqual(['announced', 'reminder_7d', 'reminder_1d'])
    const after = dueSteps(p, t0 + 31 * day)
    expect(after.steps).toEqual(['announced', 'retired'])
    expect(after.endedAt).toBe(t0 + 30 * day)
  })

  it('the refusal date of a scheduled brownout is its first window, not the day it begins', () => {
    const p = policy({ state: 'deprecate', windows: [{ start: '09:00', end: '12:00' }], schedule: [{ state: 'brownout', from: iso(t0 + 10 * day) }, { state: 'deny', from: iso(t0 + 40 * day) }] })
    expect(refusalAt(p, t0)).toBe(t0 + 10 * day + 9 * 3_600_000)
    // Once the brownouts run, the next refusal date is the deny.
    expect(refusalAt(p, t0 + 11 * day)).toBe(t0 + 40 * day)
  })

  it('a brownout beginning inside a window refuses at once', () => {
    const p = policy({ state: 'deprecate', windows: [{ start: '00:00', end: '03:00' }], schedule: [{ state: 'brownout', from: iso(t0 + 10 * day + 3_600_000) }] })
    expect(refusalAt(p, t0)).toBe(t0 + 10 * day + 3_600_000)
  })
})

describe('recipientSteps', () => {
  const deny30 = policy({ state: 'deprecate', schedule: [{ state: 'deny', from: iso(t0 + 30 * day) }] })

  it('a deny brought forward to 5 days away: one reminder_7d, not both reminders', () => {
    // Announced when the deny was 30 days away…
    const first = recipientSteps(dueSteps(deny30, t0), told([]), [client()])
    expect(first).toEqual(['announced'])
    // …then the deny is brought forward to 5 days from now.
    const now = t0 + 2 * day
    const forward = policy({ state: 'deprecate', schedule: [{ state: 'deny', from: iso(now + 5 * day) }] }, now)
    const due = dueSteps(forward, now)
    const steps = recipientSteps(due, told([['announced', t0]]), [client({ lastSeen: now - 3_600_000 })])
    expect(steps).toEqual(['reminder_7d'])
    // The next pass, the same day: nothing more.
    expect(recipientSteps(due, told([['announced', t0], ['reminder_7d', now]]), [client({ lastSeen: now })])).toEqual([])
  })

  it('steps due together are told together, each once', () => {
    const now = t0 + 29.5 * day
    const steps = recipientSteps(dueSteps(deny30, now), told([]), [client({ lastSeen: now - day })])
    expect(steps).toEqual(['announced', 'reminder_7d', 'reminder_1d'])
  })

  it('a client family seen with OAuth after its last legacy request gets no reminder', () => {
    const now = t0 + 24 * day
    expect(recipientSteps(dueSteps(deny30, now), told([['announced', t0]]), [client({ lastSeen: now - day, moved: true })])).toEqual([])
    // One client moved, another did not: still reminded.
    expect(recipientSteps(dueSteps(deny30, now), told([['announced', t0]]), [client({ lastSeen: now - day, moved: true }), client({ lastSeen: now - day })])).toEqual(['reminder_7d'])
  })

  it('silence is not moving: no legacy request since the last notice, still reminded', () => {
    const now = t0 + 24 * day
    expect(recipientSteps(dueSteps(deny30, now), told([['announced', t0 + day]]), [client({ lastSeen: t0 + day - 1 })])).toEqual(['reminder_7d'])
    expect(recipientSteps(dueSteps(deny30, now), told([['announced', t0 + day]]), [client({ lastSeen: t0 + day + 1 })])).toEqual(['reminder_7d'])
  })

  it('the date moves earlier: date_moved with what else is due, once per date, not for one who moved', () => {
    const now = t0 + 2 * day
    const earlier = policy({ state: 'deprecate', schedule: [{ state: 'deny', from: iso(t0 + 20 * day) }] }, now)
    const toldLater = told([['announced', t0]], t0 + 30 * day)
    expect(recipientSteps(dueSteps(earlier, now), toldLater, [client({ lastSeen: t0 - day })])).toEqual(['date_moved'])
    // Told the new date already: nothing.
    expect(recipientSteps(dueSteps(earlier, now), told([['announced', t0], ['date_moved', now]], t0 + 20 * day), [client()])).toEqual([])
    // Moved again, earlier still: told again.
    const sooner = policy({ state: 'deprecate', schedule: [{ state: 'deny', from: iso(now + 3 * day) }] }, now)
    expect(recipientSteps(dueSteps(sooner, now), told([['announced', t0], ['date_moved', now]], t0 + 20 * day), [client()])).toEqual(['reminder_7d', 'date_moved'])
    // A later date tells nothing new; nor does an earlier one to a recipient who moved.
    const later = policy({ state: 'deprecate', schedule: [{ state: 'deny', from: iso(t0 + 40 * day) }] }, now)
    expect(recipientSteps(dueSteps(later, now), toldLater, [client()])).toEqual([])
    expect(recipientSteps(dueSteps(earlier, now), toldLater, [client({ moved: true })])).toEqual([])
    // A deny made now, before the date told: told it has been switched off (date_moved), refused or not.
    const denied = policy({ state: 'deny' }, now)
    expect(recipientSteps(dueSteps(denied, now + 1), toldLater, [client()])).toEqual(['date_moved'])
  })

  it('retired only for recipients refused since the deny began', () => {
    const now = t0 + 32 * day
    const due = dueSteps(deny30, now)
    const told1 = told([['announced', t0], ['reminder_7d', t0 + 23 * day], ['reminder_1d', t0 + 29 * day]])
    expect(recipientSteps(due, told1, [client({ lastSeen: t0 + 29.5 * day })])).toEqual([])
    expect(recipientSteps(due, told1, [client({ lastSeen: t0 + 31 * day, refusedByPolicy: 3 })])).toEqual(['retired'])
  })

  it('a client kept working by an exception past the date is announced, not reminded', () => {
    const now = t0 + 24 * day
    expect(recipientSteps(dueSteps(deny30, now), told([]), [client({ lastSeen: now - day, excepted: true })])).toEqual(['announced'])
  })
})
