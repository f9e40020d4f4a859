// Bounded waits (docs/operations.md#deadlines): a dependency that accepts a connection and never
// answers must cost a request a known time, not forever. The drivers bound each call
// (connect, statement, command); this bounds a whole piece of work made of several calls.

/** Thrown when `withDeadline`'s time ran out; `what` names the work (for logs and checks). */
export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded'
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} took longer than ${ms} ms`)
  }
}

/**
 * Resolves or rejects as `work` does, or rejects with DeadlineExceeded after `ms`: one
 * timer, cleared when the work settles (docs/performance.md#one-path-per-authentication-decision). The work itself is not cancelled (the drivers' own
 * deadlines end it); its late result is ignored, and a late rejection is never left
 * unhandled.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineExceeded(what, ms)), ms)
    timer.unref()
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (err: Error) => {
        clearTimeout(timer)
        reject(err)
      },
    )
  })
}

/** Readiness answers within 2 s whatever hangs (docs/operations.md#dependability): each check gets this long. */
export const readinessCheckMs = 1500
