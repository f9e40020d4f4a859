// The replay cache (docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a, docs/operations.md#dependability): remembers (scope, nonce) claims for a window.

export interface ReplayCache {
  /**
   * Claims `key` for `ttlSeconds`: true when it was unused (and is now claimed), false
   * when it was claimed before within its TTL. A backend may hold a claim a bounded while
   * longer, never shorter (Redis: up to one time slice, replay/redis.ts). One atomic
   * check-and-claim; throws
   * ReplayCacheUnavailable when the backend cannot answer. `client` names who claims (an
   * OAuth token, a WSSE user): an in-process cache bounds the entries one client may
   * hold (ReplayClientQuotaExceeded), so that one client cannot fill it for everyone.
   */
  claim(key: string, ttlSeconds: number, client?: string): Promise<boolean>
  /** Resolves when the backend answers; throws ReplayCacheUnavailable otherwise. */
  ping(): Promise<void>
  close(): Promise<void>
}

export class ReplayCacheUnavailable extends Error {
  override name = 'ReplayCacheUnavailable'
}

/** One client holds as many unexpired claims as an in-process cache allows it. */
export class ReplayClientQuotaExceeded extends Error {
  override name = 'ReplayClientQuotaExceeded'
}
