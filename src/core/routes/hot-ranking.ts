// The hot rankings (docs/api.md#timelines, docs/api.md#keywords): keywords/hot and each
// source's sort=hot order are the same for every caller and every page, and making one
// costs milliseconds (a day of entries grouped; the stars of a source's newest thousand
// entries counted), so each is made at most once per `core.hotRefreshSeconds`
// (docs/performance.md#what-keeps-the-cost-flat). Past a refresh the next caller still gets
// the last ranking while a new one is made (lru-cache's stale-while-revalidate), and the
// last one stays while making one fails. Pages read their entries, favorites and replies
// fresh; only the order waits for the refresh. A sort=hot query with `max_id` or `since` is
// ranked on its own, never kept.
import { LRUCache } from 'lru-cache'
import type { ContentStore } from '../store/index.js'
import type { TimelineQuery, TimelineSource } from '../store/types.js'

/**
 * `make(key, context)` kept per key for `refreshSeconds` (at most `max` keys), as above;
 * made on every call when `refreshSeconds` is 0.
 */
export function keptRanking<V extends object, C>(refreshSeconds: number, max: number, make: (key: string, context: C) => Promise<V>): (key: string, context: C) => Promise<V> {
  if (refreshSeconds === 0) return make
  // The context (what to rank) is C; lru-cache's conditional types take it as unknown.
  const kept = new LRUCache<string, V, unknown>({
    max,
    ttl: refreshSeconds * 1000,
    allowStale: true,
    noDeleteOnStaleGet: true,
    allowStaleOnFetchRejection: true,
    fetchMethod: (key, _stale, { context }) => make(key, context as C),
  })
  return async (key, context) => (await kept.fetch(key, { context }))!
}

/** Sources whose order is kept at once: each holds at most `hotCandidates` IDs in 8 bytes each (8 KiB). */
const keptSources = 512

function sourceKey(source: TimelineSource): string {
  switch (source.kind) {
    case 'public':
      return `public\n${source.deployment}`
    case 'keyword':
      return `keyword\n${source.word}`
    case 'user':
    case 'friends':
      return `${source.kind}\n${source.userId}`
    case 'album':
      return `album\n${source.word ?? ''}`
  }
}

/** The IDs of a sort=hot page: `count` of the source's order from the `page`-th page. */
export function hotPageIds(store: ContentStore, refreshSeconds: number): (query: TimelineQuery) => Promise<string[]> {
  const order = keptRanking(refreshSeconds, keptSources, async (_key, q: TimelineQuery) => BigInt64Array.from(await store.hotRanking(q), BigInt))
  return async (q) => {
    const from = (q.page - 1) * q.count
    if (q.maxId !== null || q.since !== null) return (await store.hotRanking(q)).slice(from, from + q.count)
    return Array.from((await order(sourceKey(q.source), q)).subarray(from, from + q.count), String)
  }
}
