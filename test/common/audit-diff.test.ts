// An audit event as people read it: only the fields that changed, whole values, the
// default policy's epoch as "(default)", a reset as a reset.
import { describe, expect, it } from 'vitest'
import { eventSummary, fieldChanges } from '../../src/common/audit-diff.js'

const policy = { state: 'allow', since: '1970-01-01T00:00:00Z', deprecated_since: null, sunset: null, windows: [], schedule: [], exceptions: [] }

describe('audit events', () => {
  it('the first policy change: only the changed fields, and no 1970', () => {
    const after = { ...policy, state: 'deprecate', since: '2027-01-01T00:00:00Z', sunset: '2027-06-30T00:00:00Z' }
    expect(fieldChanges(policy, after)).toEqual([
      { field: 'state', before: '"allow"', after: '"deprecate"' },
      { field: 'since', before: '(default)', after: '"2027-01-01T00:00:00Z"' },
      { field: 'sunset', before: 'null', after: '"2027-06-30T00:00:00Z"' },
    ])
    expect(eventSummary('policy.update', policy, after)).not.toContain('1970')
  })

  it('never cuts a value mid-way', () => {
    const windows = Array.from({ length: 8 }, (_, i) => ({ start: `0${i}:00`, end: `0${i}:30` }))
    const text = eventSummary('policy.update', policy, { ...policy, windows })
    expect(text).toBe(`windows: [] -> ${JSON.stringify(windows)}`)
  })

  it('a reset reads as a reset, a creation as created, a deletion as deleted', () => {
    expect(eventSummary('user.reset_password', null, { sessions_ended: 2 })).toBe('sign-in password reset; sessions_ended: (none) -> 2')
    expect(eventSummary('user.reset_api_password', null, null)).toBe('API password reset (the old one stops working)')
    expect(eventSummary('user.create', null, { id: 'ann' })).toBe('created; id: (none) -> "ann"')
    expect(eventSummary('app.delete', { name: 'x' }, null)).toBe('deleted')
  })
})
