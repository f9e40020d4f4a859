// Failed-attempt counting (docs/operations.md#throttling): one counter per key; once a key has `maxFailures`
// failures inside its window, it is blocked until the window ends. Which keys an attempt
// counts against, and which of them can refuse it, is attempts.ts.

export interface FailureThrottle {
  /** Seconds to wait before another attempt (the longest over `keys`); 0 when allowed. */
  check(keys: string[]): Promise<number>
  /** The same verdict when it is known here without asking anyone (a local view holds every key); null otherwise. */
  peek?(keys: string[]): number | null
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
