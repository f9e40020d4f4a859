// A minimal circuit breaker (docs/operations.md#dependability): after a backend failure, callers skip the backend
// for a short window instead of hammering a dead Redis; the first call after the window
// tries it again, so recovery needs no restart.

export class CircuitBreaker {
  #openUntil = 0

  constructor(readonly openMs = 1000) {}

  /** True while calls should skip the backend. */
  get isOpen(): boolean {
    return Date.now() < this.#openUntil
  }

  /** The backend just failed: skip it for `openMs`. */
  trip(): void {
    this.#openUntil = Date.now() + this.openMs
  }

  /** The backend just answered. */
  close(): void {
    this.#openUntil = 0
  }
}
