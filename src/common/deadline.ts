// Bounded waits (docs/operations.md#deadlines): a dependency that accepts a connection and never
// answers must cost a request a known time, not forever. The drivers bound each call
// (connect, statement, command); this bounds a whole piece of work made of several calls.
import { performance } from 'node:perf_hooks'

/** Thrown when `withDeadline`'s time ran out; `what` names the work (for logs and checks). */
export class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded'
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} took longer than ${ms} ms`)
  }
}

interface Pending {
  /** performance.now() at which the work's time runs out. */
  at: number
  expire: () => void
  prev: Pending | null
  next: Pending | null
}

/**
 * The pending deadlines of one length. Made in order, they run out in the same order, so
 * one timer serves them all: it is set for the oldest, and when it fires it expires what
 * is due and is set again for the next. Work that settles takes its entry out of the list
 * at once, so nothing outlives its request. A deadline costs a small object and two links
 * instead of a timer of its own and a race of promises: 0.47 against 1.05 µs per awaited
 * call (docs/performance.md#one-timer-per-deadline-length).
 */
class DeadlineQueue {
  #first: Pending | null = null
  #last: Pending | null = null
  #timer: NodeJS.Timeout | undefined

  constructor(readonly ms: number) {}

  add(expire: () => void): Pending {
    const entry: Pending = { at: performance.now() + this.ms, expire, prev: this.#last, next: null }
    if (this.#last === null) this.#first = entry
    else this.#last.next = entry
    this.#last = entry
    if (this.#timer === undefined) this.#arm(entry.at)
    return entry
  }

  /** Takes `entry` out of the list; nothing when it already left it (settled or expired). */
  remove(entry: Pending): void {
    if (entry.prev !== null) entry.prev.next = entry.next
    else if (this.#first === entry) this.#first = entry.next
    else return
    if (entry.next !== null) entry.next.prev = entry.prev
    else this.#last = entry.prev
    entry.prev = entry.next = null
  }

  #arm(at: number): void {
    this.#timer = setTimeout(() => this.#fire(), Math.max(1, Math.ceil(at - performance.now())))
    this.#timer.unref()
  }

  #fire(): void {
    this.#timer = undefined
    const now = performance.now()
    while (this.#first !== null && this.#first.at <= now) {
      const due = this.#first
      this.remove(due)
      due.expire()
    }
    if (this.#first !== null) this.#arm(this.#first.at)
  }
}

const queues = new Map<number, DeadlineQueue>()

/**
 * Resolves or rejects as `work` does, or rejects with DeadlineExceeded after `ms`. The work
 * itself is not cancelled (the drivers' own deadlines end it); its late result is ignored,
 * and a late rejection is never left unhandled.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let queue = queues.get(ms)
  if (queue === undefined) queues.set(ms, (queue = new DeadlineQueue(ms)))
  const q = queue
  return new Promise<T>((resolve, reject) => {
    const entry = q.add(() => reject(new DeadlineExceeded(what, ms)))
    work.then(
      (value) => {
        q.remove(entry)
        resolve(value)
      },
      (err: Error) => {
        q.remove(entry)
        reject(err)
      },
    )
  })
}

/** Readiness answers within 2 s whatever hangs (docs/operations.md#dependability): each check gets this long. */
export const readinessCheckMs = 1500
