// How kigo writes an instant: always UTC. The API, the operator API, the audit trail and the
// pages' `datetime` attributes use ISO 8601 to the second (docs/api.md#objects); messages
// meant to be read (policy summaries, the usage page) use the minute.

/** `2026-11-21T09:30:00Z`: UTC to the second (the milliseconds dropped, never rounded up). */
export function isoSeconds(at: number | Date): string {
  const ms = typeof at === 'number' ? at : at.getTime()
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z')
}

/** `2026-11-21 09:30 UTC`: the minute, as a message says when something happens. */
export const utcMinute = (at: number | Date): string => `${isoSeconds(at).slice(0, 16).replace('T', ' ')} UTC`

/** `09:30`: the time of day in UTC. */
export const utcClock = (at: number | Date): string => isoSeconds(at).slice(11, 16)
