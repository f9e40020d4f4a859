// The operations the `scale` group times at every size (docs/performance.md#scale): each as
// the request a client would send to the core (as the gateway forwards it), and as the
// store call the core makes for it, whose statements are EXPLAINed.
import { createHash, randomBytes } from 'node:crypto'
import { identityKey, signIdentity } from '../../src/common/identity.js'
import { operationNameOf } from '../../src/common/route-table.js'
import type { SqlContentStore } from '../../src/core/store/sql-content-store.js'
import type { TimelineQuery, TimelineSource } from '../../src/core/store/types.js'
import type { PreparedRequest } from '../scenarios.js'
import { heavyFollower, type ScaleFixture } from './seed.js'

export interface ScaleOperation {
  /** The key under scale.sizes.<size>. */
  name: string
  /** A fresh request each call. */
  request: () => PreparedRequest
  /** What the core asks its store for this request (its statements are EXPLAINed). */
  store: (store: SqlContentStore) => Promise<unknown>
}

/** The window sort=hot ranks over and keywords/hot counts over (config/default.json). */
export interface Windows {
  hotEntriesHours: number
  hotKeywordsHours: number
}

export function scaleOperations(f: ScaleFixture, host: string, secretKey: string, windows: Windows): ScaleOperation[] {
  const get = (path: string) => () => ({ method: 'GET' as const, path, headers: { host } })
  const hotSince = () => new Date(Date.now() - windows.hotEntriesHours * 3600_000)
  const q = (source: TimelineSource, sort: 'new' | 'hot', page: number): TimelineQuery => ({ source, count: 20, page, since: null, maxId: null, sort, hotSince: hotSince() })
  const ops: ScaleOperation[] = []
  // Entries spread over the whole store, in a scattered order.
  const first = BigInt(f.firstId)
  const span = BigInt(f.lastId) - first + 1n
  let n = 0n
  const someId = () => String(first + ((n++ * 7919n) % span))
  ops.push({
    name: 'statuses_show',
    request: () => get(`/api/statuses/show/${someId()}.json`)(),
    store: async (s) => {
      const id = someId()
      return Promise.all([s.getEntryFor(id, null), s.repliesOf(id, null)])
    },
  })
  const timelines: Array<[string, string, TimelineSource, boolean]> = [
    ['public', '/api/statuses/public_timeline.json', { kind: 'public', deployment: 'domestic' }, true],
    ['keyword_top', `/api/statuses/keyword_timeline/${encodeURIComponent(f.topKeyword)}.json`, { kind: 'keyword', word: f.topKeyword }, true],
    ['keyword_rare', `/api/statuses/keyword_timeline/${encodeURIComponent(f.rareKeyword)}.json`, { kind: 'keyword', word: f.rareKeyword }, false],
    ['user', `/api/statuses/user_timeline/${f.topAuthor}.json`, { kind: 'user', userId: f.topAuthor }, true],
    ['friends', `/api/statuses/friends_timeline/${heavyFollower}.json`, { kind: 'friends', userId: heavyFollower }, true],
  ]
  for (const [name, path, source, deep] of timelines) {
    for (const sort of ['new', 'hot'] as const) {
      for (const page of deep ? [1, 50] : [1]) {
        ops.push({
          name: `${name}_${sort}_p${page}`,
          request: get(`${path}?sort=${sort}&page=${page}`),
          store: (s) => s.timeline(q(source, sort, page), null),
        })
      }
    }
  }
  for (const page of [1, 50]) {
    ops.push({ name: `album_p${page}`, request: get(`/api/statuses/album.json?page=${page}`), store: (s) => s.timeline(q({ kind: 'album', word: null }, 'new', page), null) })
  }
  ops.push(
    {
      name: 'keywords_hot',
      request: get('/api/keywords/hot.json'),
      store: (s) => s.hotKeywords(new Date(Date.now() - windows.hotKeywordsHours * 3600_000), 100),
    },
    { name: 'keywords_show', request: get(`/api/keywords/show/${encodeURIComponent(f.topKeyword)}.json`), store: (s) => s.getKeyword(f.topKeyword) },
    { name: 'keywords_list', request: get('/api/keywords/list.json'), store: (s) => s.listKeywords(null, 100, 0) },
    { name: 'keywords_list_word', request: get(`/api/keywords/list.json?word=${encodeURIComponent(f.substring)}`), store: (s) => s.listKeywords(f.substring, 100, 0) },
    { name: 'friendships_show', request: get(`/api/friendships/show/${f.topAuthor}.json`), store: (s) => s.getUserWithFollowers(f.topAuthor) },
    { name: 'user_keywords', request: get(`/api/statuses/keywords/${heavyFollower}.json`), store: (s) => s.followedKeywords(heavyFollower) },
  )
  // Last, so the reads above see the store as seeded: new entries by seeded users on the
  // rare keyword, each signed as the gateway signs what it forwards (docs/gateway.md#forwarding).
  const key = identityKey(secretKey)
  const source = randomBytes(6).toString('hex')
  let k = 0
  const users = f.size.users
  ops.push({
    name: 'statuses_update',
    request: () => {
      k++
      const path = '/api/statuses/update.json'
      const body = `keyword=${encodeURIComponent(f.rareKeyword)}&status=${encodeURIComponent(`scale entry ${k} at ${Date.now()}`)}`
      const user = `user${(k * 7919) % users + 1}`
      const signed = signIdentity(
        key,
        { method: 'POST', url: path, host, requestId: `scale-${source}-${k}`, operation: operationNameOf('POST', path), bodySha256: createHash('sha256').update(body).digest('base64url') },
        { user, userName: `Scale User ${(k * 7919) % users + 1}`, authMethod: 'basic', consumer: '', scopes: [] },
      )
      return { method: 'POST', path, headers: { host, 'content-type': 'application/x-www-form-urlencoded', ...signed }, body }
    },
    store: (s) =>
      s.createEntry(
        { authorId: 'u1', authorName: 'Scale User 1', keyword: f.rareKeyword, source: 'kigo scale', deployment: 'domestic', inReplyToStatusId: null },
        [],
        () => 'scale entry written for EXPLAIN',
      ),
  })
  return ops
}
