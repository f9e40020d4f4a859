// What a change replaces (docs/gateway.md#one-schedule), as pure functions: entries stored
// before that would undo the change go, and are named; the others stay.
import { describe, expect, it } from 'vitest'
import { normalizeChange, normalizePolicy } from '../../../src/gateway/policy/normalize.js'
import type { MethodPolicyInput, ScheduleEntrySpec } from '../../../src/gateway/policy/types.js'

const t0 = Date.parse('2030-01-01T00:00:00Z')
const windows = [{ start: '09:00', end: '12:00' }]
const entry = (state: ScheduleEntrySpec['state'], date: string): ScheduleEntrySpec => ({ state, from: `${date}T00:00:00Z` })
const stored = (input: MethodPolicyInput) => normalizePolicy('wsse', { windows, ...input }, t0)
const change = (previous: MethodPolicyInput, input: MethodPolicyInput) => normalizeChange('wsse', { windows, ...input }, t0 + 1000, stored(previous))

describe('one schedule', () => {
  const pending = [entry('allow', '2030-02-01'), entry('deprecate', '2030-03-01'), entry('brownout', '2030-04-01'), entry('deny', '2030-05-01')]

  it('a state set now drops the pending entries less strict than it, and those of its own state', () => {
    const previous = { state: 'allow' as const, schedule: pending }
    const cases: Array<[MethodPolicyInput['state'], ScheduleEntrySpec[]]> = [
      ['deny', pending],
      ['brownout', pending.slice(0, 3)],
      ['deprecate', pending.slice(0, 2)],
    ]
    for (const [state, replaced] of cases) {
      const made = change(previous, { state, schedule: pending })
      expect(made.replaced, state).toEqual(replaced)
      expect(made.policy.schedule, state).toEqual(pending.filter((e) => !replaced.includes(e)))
    }
  })

  it('allow made now, or a change of exceptions only, drops nothing', () => {
    const previous = { state: 'deprecate' as const, schedule: pending.slice(2) }
    expect(change(previous, { state: 'allow', schedule: pending.slice(2) }).replaced).toEqual([])
    expect(change(previous, { state: 'deprecate', schedule: pending.slice(2), exceptions: [{ user: 'alice', until: '2030-06-01' }] }).replaced).toEqual([])
  })

  it('a scheduled entry replaces the one of its state, one at its instant, and the less strict ones after it; stricter ones before it stay', () => {
    const previous = { state: 'deprecate' as const, schedule: [entry('brownout', '2030-02-01'), entry('deny', '2030-06-01'), entry('deprecate', '2030-07-01')] }
    const made = change(previous, { state: 'deprecate', schedule: [...previous.schedule, entry('deny', '2030-03-01')] })
    expect(made.policy.schedule).toEqual([entry('brownout', '2030-02-01'), entry('deny', '2030-03-01')])
    expect(made.replaced).toEqual([entry('deny', '2030-06-01'), entry('deprecate', '2030-07-01')])

    const same = change(previous, { state: 'deprecate', schedule: [...previous.schedule, entry('deny', '2030-02-01')] })
    expect(same.replaced).toEqual([entry('brownout', '2030-02-01'), entry('deny', '2030-06-01'), entry('deprecate', '2030-07-01')])
    expect(same.policy.schedule).toEqual([entry('deny', '2030-02-01')])
  })

  it('an entry given again is one entry, and replaces nothing', () => {
    const previous = { state: 'deprecate' as const, schedule: [entry('deny', '2030-06-01')] }
    const made = change(previous, { state: 'deprecate', schedule: [entry('deny', '2030-06-01'), { state: 'deny', from: '2030-06-01' }] })
    expect(made.policy.schedule).toEqual([entry('deny', '2030-06-01')])
    expect(made.replaced).toEqual([])
  })
})
