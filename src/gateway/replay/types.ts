// The replay cache (SPEC §4.3, §4.4, §7): remembers (scope, nonce) claims for a window.

export interface ReplayCache {
  /**
   * Claims `key` for `ttlSeconds`: true when it was unused (and is now claimed), false
   * when it was claimed before within its TTL. One atomic set-if-absent; throws
   * ReplayCacheUnavailable when the backend cannot answer.
   */
  claim(key: string, ttlSeconds: number): Promise<boolean>
  /** Resolves when the backend answers; throws ReplayCacheUnavailable otherwise. */
  ping(): Promise<void>
  close(): Promise<void>
}

export class ReplayCacheUnavailable extends Error {
  override name = 'ReplayCacheUnavailable'
}
