// Times of day as the policy writes them (UTC throughout); instants are written by
// src/common/time.ts.

/** Minutes since midnight UTC of `HH:MM` (24:00 is 1440). */
export const clockMinutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))
