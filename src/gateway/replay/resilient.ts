// The replay cache as the gateway uses it, one per method (docs/operations.md#dependability, config
// `auth.replayFallback.<method>`): while the primary (Redis) cannot answer,
//   - `fail-closed` (the default) rethrows ReplayCacheUnavailable: the caller answers 503
//     with Retry-After;
//   - `memory` answers from an in-process MemoryReplayCache instead, counted as fail-open
//     (a nonce used at another gateway during the outage is not seen here).
// After a failure the primary is skipped for a short breaker window, then tried again on
// the next claim: recovery needs no restart. Keys claimed in the fallback stay refused
// after recovery until they expire, since the primary never saw them.
import { CircuitBreaker } from '../../common/circuit-breaker.js'
import { MemoryReplayCache } from './memory.js'
import { ReplayCacheUnavailable, type ReplayCache } from './types.js'

export type ReplayFallbackPolicy = 'fail-closed' | 'memory'

export interface ResilientReplayCacheOptions {
  policy: ReplayFallbackPolicy
  /** Once per claim the primary did not answer (kigo_replay_cache_errors_total). */
  onError?: (err: ReplayCacheUnavailable) => void
  /** Once per claim answered by the fallback (kigo_replay_cache_fail_open_total). */
  onFailOpen?: () => void
  /** How long the primary is skipped after a failure; default 1000 ms. */
  breakerMs?: number
  /** The in-process fallback; default a new MemoryReplayCache. */
  fallback?: MemoryReplayCache
}

export class ResilientReplayCache implements ReplayCache {
  readonly #breaker: CircuitBreaker
  readonly #fallback: MemoryReplayCache

  constructor(
    readonly primary: ReplayCache,
    readonly options: ResilientReplayCacheOptions,
  ) {
    this.#breaker = new CircuitBreaker(options.breakerMs ?? 1000)
    this.#fallback = options.fallback ?? new MemoryReplayCache()
  }

  /** Seconds a client should wait before retrying after a fail-closed refusal (Retry-After). */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.#breaker.openMs / 1000))
  }

  async claim(key: string, ttlSeconds: number, client?: string): Promise<boolean> {
    let failure: ReplayCacheUnavailable
    if (this.#breaker.isOpen) {
      failure = new ReplayCacheUnavailable('replay cache unavailable (recent failure; retrying shortly)')
    } else {
      try {
        const fresh = await this.primary.claim(key, ttlSeconds)
        this.#breaker.close()
        // Claimed during an outage: the primary cannot know it, the fallback still does.
        if (fresh && this.#fallback.size > 0 && this.#fallback.has(key)) return false
        return fresh
      } catch (err) {
        if (!(err instanceof ReplayCacheUnavailable)) throw err
        this.#breaker.trip()
        failure = err
      }
    }
    this.options.onError?.(failure)
    if (this.options.policy === 'fail-closed') throw failure
    this.options.onFailOpen?.()
    return this.#fallback.claim(key, ttlSeconds, client)
  }

  /** Readiness reflects the primary, whatever the policy. */
  ping(): Promise<void> {
    return this.primary.ping()
  }

  /** Closes the fallback; the primary is shared and closed by its owner. */
  async close(): Promise<void> {
    await this.#fallback.close()
  }
}
