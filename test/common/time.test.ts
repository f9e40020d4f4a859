// The one way kigo writes an instant (src/common/time.ts, docs/api.md#objects).
import { describe, expect, it } from 'vitest'
import { isoSeconds, utcClock, utcMinute } from '../../src/common/time.js'

describe('isoSeconds', () => {
  it('writes UTC to the second, from a Date or from milliseconds, dropping (never rounding) the milliseconds', () => {
    const at = Date.UTC(2026, 10, 21, 9, 30, 59, 999)
    expect(isoSeconds(at)).toBe('2026-11-21T09:30:59Z')
    expect(isoSeconds(new Date(at))).toBe('2026-11-21T09:30:59Z')
    expect(isoSeconds(Date.UTC(2026, 11, 31, 23, 59, 59, 500))).toBe('2026-12-31T23:59:59Z')
  })
  it('writes an instant before 1970 the same way', () => {
    expect(isoSeconds(-1)).toBe('1969-12-31T23:59:59Z')
  })
})

describe('utcMinute and utcClock', () => {
  it('write the minute and the time of day in UTC, whatever the process time zone', () => {
    const at = Date.UTC(2027, 5, 30, 0, 5, 42)
    expect(utcMinute(at)).toBe('2027-06-30 00:05 UTC')
    expect(utcClock(new Date(at))).toBe('00:05')
  })
})
