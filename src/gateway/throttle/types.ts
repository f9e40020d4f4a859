// Failed-attempt throttling (SPEC §4.7): failed Basic, WSSE and login attempts are counted
// per user and per client address; once a key has `maxFailures` failures inside its
// window, further attempts get 429 with Retry-After until the window ends.

export interface FailureThrottle {
  /** Seconds to wait before another attempt (the longest over `keys`); 0 when allowed. */
  check(keys: string[]): Promise<number>
  /** Counts one failed attempt against every key. */
  recordFailure(keys: string[]): Promise<void>
  /** Forgets the failures of `keys` (a successful login for that user). */
  reset(keys: string[]): Promise<void>
  close(): Promise<void>
}

export interface ThrottleSettings {
  maxFailures: number
  windowSeconds: number
}

/** Thrown by a shared backend that cannot answer; ResilientFailureThrottle handles it. */
export class ThrottleUnavailable extends Error {
  override name = 'ThrottleUnavailable'
}

/** The keys of one attempt: the user tried (when known) and the client address. */
export function throttleKeys(attempt: { user?: string | undefined; ip: string }): string[] {
  return attempt.user === undefined || attempt.user === '' ? [`ip:${attempt.ip}`] : [`user:${attempt.user}`, `ip:${attempt.ip}`]
}
