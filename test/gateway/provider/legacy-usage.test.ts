// What the account page tells a user about one of their legacy tools, from the policy, in
// the words every surface uses (policy/outlook.ts).
import { describe, expect, it } from 'vitest'
import { legacyClientView } from '../../../src/gateway/account-area/legacy-usage.js'
import { defaultMethodPolicy, type MethodPolicy } from '../../../src/gateway/policy/types.js'

const now = Date.parse('2027-01-10T10:30:00Z')
const row = { method: 'basic', user: 'carol', client: 'OldTool/1', count: 3, accepted: 3, refusedByPolicy: 0, failedCredentials: 0, throttled: 0, firstSeen: now - 86_400_000, lastSeen: now - 60_000 }
const policy = (p: Partial<MethodPolicy>): MethodPolicy => ({ ...defaultMethodPolicy(), since: '2027-01-01T00:00:00Z', ...p })

describe('legacyClientView', () => {
  it('allow without dates: works, no end date yet', () => {
    const v = legacyClientView(row, policy({}), 'carol', now)
    expect(v.fate).toBe('Works. No end date is set yet. Moving to OAuth now avoids a surprise.')
    expect(v.refusedNow).toBe(false)
  })

  it('deprecate with a sunset and a scheduled deny', () => {
    const v = legacyClientView(row, policy({ state: 'deprecate', sunset: '2027-06-30T00:00:00Z', schedule: [{ state: 'deny', from: '2027-07-01T00:00:00Z' }] }), 'carol', now)
    expect(v.fate).toBe('Works, but is deprecated. It stops working on 2027-07-01 00:00 UTC.')
  })

  it('brownout with a window open now is refused now, unless an exception names the user (and, when it names one, the client)', () => {
    const p = policy({ state: 'brownout', windows: [{ start: '10:00', end: '11:00' }] })
    expect(legacyClientView(row, p, 'carol', now)).toMatchObject({ refusedNow: true, fate: 'Refused now, until 11:00 UTC (a brownout); refused every day 10:00–11:00 UTC, working otherwise. No end date is set yet.' })
    const excepted = legacyClientView(row, { ...p, exceptions: [{ user: 'carol', client: 'OldTool/1', until: '2027-02-01T00:00:00Z' }] }, 'carol', now)
    expect(excepted.refusedNow).toBe(false)
    expect(excepted.fate).toBe('Works, even during the brownouts (every day 10:00–11:00 UTC), until 2027-02-01 00:00 UTC (an exception for this client). No end date is set yet.')
    // Another user's exception says nothing here.
    expect(legacyClientView(row, { ...p, exceptions: [{ user: 'dave_x', until: '2027-02-01T00:00:00Z' }] }, 'carol', now).refusedNow).toBe(true)
  })

  it('deny: refused', () => {
    expect(legacyClientView({ ...row, client: '' }, policy({ state: 'deny' }), 'carol', now)).toMatchObject({ client: '(no name sent)', refusedNow: true, fate: 'Refused: switched off since 2027-01-01 00:00 UTC.' })
  })
})
