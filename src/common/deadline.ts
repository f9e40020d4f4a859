// Bounded waits (README "Dependability"): a dependency that accepts a connection and never
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
 * Resolves or rejects as `work` does, or rejects with DeadlineExceeded after `ms`. The work
 * itself is not cancelled (the drivers' own deadlines end it); its late result is ignored.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(what, ms)), ms)
    timer.unref()
  })
  // A rejection arriving after the deadline must not become an unhandled rejection.
  work.catch(() => undefined)
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}

/** Readiness answers within 2 s whatever hangs (SPEC §7): each check gets this long. */
export const readinessCheckMs = 1500
