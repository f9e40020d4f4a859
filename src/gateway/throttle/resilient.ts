// Throttling while Redis is away (docs/operations.md#dependability asks that an outage not take the gateway down):
// an unavailable Redis must not lock everyone out, so throttling fails open, counted, and
// falls back to counting in this process, which still stops a fast guesser hitting this
// gateway. Counts made during the outage keep applying after recovery until their window
// ends. After a failure Redis is skipped for a short breaker window, then tried again.
import { CircuitBreaker } from '../../common/circuit-breaker.js'
import { MemoryFailureThrottle } from './memory.js'
import { ThrottleUnavailable, type FailureThrottle } from './types.js'

export interface ResilientFailureThrottleOptions {
  /** Once per call the primary did not answer. */
  onError?: (err: ThrottleUnavailable) => void
  /** Once per call answered by the in-process fallback instead. */
  onFailOpen?: () => void
  /** How long the primary is skipped after a failure; default 1000 ms. */
  breakerMs?: number
}

export class ResilientFailureThrottle implements FailureThrottle {
  readonly #breaker: CircuitBreaker
  readonly #fallback: MemoryFailureThrottle

  constructor(
    readonly primary: FailureThrottle,
    settings: { maxFailures: number; windowSeconds: number },
    readonly options: ResilientFailureThrottleOptions = {},
  ) {
    this.#breaker = new CircuitBreaker(options.breakerMs ?? 1000)
    this.#fallback = new MemoryFailureThrottle(settings)
  }

  /** Runs `op` on the primary; false when it could not answer (already counted). */
  async #tryPrimary<T>(op: (t: FailureThrottle) => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    let failure: ThrottleUnavailable
    if (this.#breaker.isOpen) failure = new ThrottleUnavailable('throttle unavailable (recent failure; retrying shortly)')
    else {
      try {
        const value = await op(this.primary)
        this.#breaker.close()
        return { ok: true, value }
      } catch (err) {
        if (!(err instanceof ThrottleUnavailable)) throw err
        this.#breaker.trip()
        failure = err
      }
    }
    this.options.onError?.(failure)
    this.options.onFailOpen?.()
    return { ok: false }
  }

  async check(keys: string[]): Promise<number> {
    const local = await this.#fallback.check(keys)
    const shared = await this.#tryPrimary((t) => t.check(keys))
    return shared.ok ? Math.max(shared.value, local) : local
  }

  async recordFailure(keys: string[]): Promise<void> {
    const shared = await this.#tryPrimary((t) => t.recordFailure(keys))
    if (!shared.ok) await this.#fallback.recordFailure(keys)
  }

  async reset(keys: string[]): Promise<void> {
    await this.#fallback.reset(keys)
    await this.#tryPrimary((t) => t.reset(keys))
  }

  async close(): Promise<void> {
    await this.#fallback.close()
  }
}
