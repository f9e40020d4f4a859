// Instants and times of day as the policy writes them (UTC throughout).

/** UTC to the second, as everywhere in kigo (docs/api.md#objects). */
export const isoSeconds = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z')

/** Minutes since midnight UTC of `HH:MM` (24:00 is 1440). */
export const clockMinutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))
