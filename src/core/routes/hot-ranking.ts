// sort=hot's order of each source (docs/api.md#timelines), kept for `core.hotRefreshSeconds`:
// ranking a source counts the stars of its newest thousand entries, the same work for every
// caller and every page of it, so it is done at most once per source per refresh
// (docs/performance.md#what-keeps-the-cost-flat). Past a refresh the next caller still gets
// the last order while a new one is made (lru-cache's stale-while-revalidate), and the last
// order stays while making one fails. Pages read their entries, star counts and favorites
// fresh; only the order waits for the refresh. A query with `max_id` or `since` is ranked
// on its own, never kept.
import { LRUCache } from 'lru-cache'
import type { ContentStore } from '../store/index.js'
import type { TimelineQuery, TimelineSource } from '../store/types.js'

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
export type HotPageIds = (query: TimelineQuery) => Promise<string[]>

export function hotPageIds(store: ContentStore, refreshSeconds: number): HotPageIds {
  const slice = (q: TimelineQuery, ids: ArrayLike<bigint> & { slice(start: number, end: number): ArrayLike<bigint> }) =>
    Array.from(ids.slice((q.page - 1) * q.count, q.page * q.count), String)
  const rankNow = async (q: TimelineQuery) => slice(q, (await store.hotRanking(q)).map(BigInt))
  if (refreshSeconds === 0) return rankNow
  const orders = new LRUCache<string, BigInt64Array, TimelineQuery>({
    max: keptSources,
    ttl: refreshSeconds * 1000,
    allowStale: true,
    noDeleteOnStaleGet: true,
    allowStaleOnFetchRejection: true,
    fetchMethod: async (_key, _stale, { context }) => BigInt64Array.from((await store.hotRanking(context)).map(BigInt)),
  })
  return async (q) => {
    if (q.maxId !== null || q.since !== null) return rankNow(q)
    return slice(q, (await orders.fetch(sourceKey(q.source), { context: q }))!)
  }
}
