// The timeline queries (docs/api.md#timelines) on both backends: what they return, that a page costs
// a constant number of queries whatever its size, and that on a store of 100,000 entries
// every page is an index scan (no sequential scan of entries).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrate, openDb, type Db } from '../../../src/common/sql.js'
import { coreSchema, migrations } from '../../../src/core/store/migrations.js'
import { SqlContentStore } from '../../../src/core/store/sql-content-store.js'
import type { TimelineQuery, TimelineSource } from '../../../src/core/store/types.js'
import { describeBackends, storageBackends } from '../../helpers/backends.js'

interface Recorded { sql: string; params: unknown[] }

/** A Db that remembers every statement sent through it. */
function recording(db: Db): { db: Db; log: Recorded[] } {
  const log: Recorded[] = []
  const wrapped: Db = Object.create(db) as Db
  wrapped.query = (async (sql: string, params: unknown[] = []) => {
    log.push({ sql, params })
    return db.query(sql, params)
  })
  return { db: wrapped, log }
}

const backends = await storageBackends('tl')

const query = (source: TimelineSource, over: Partial<TimelineQuery> = {}): TimelineQuery => ({
  source, count: 20, page: 1, since: null, maxId: null, sort: 'new', hotSince: new Date(0), ...over,
})

describeBackends('timelines', backends, (backend) => {
  let db: Db
  let log: Recorded[]
  let store: SqlContentStore

  beforeAll(async () => {
    db = await openDb({ ...backend(), timeouts: { connectTimeoutMs: 10_000, statementTimeoutMs: 120_000 } })
    await migrate(db, coreSchema, migrations)
    const r = recording(db)
    log = r.log
    store = new SqlContentStore(r.db)
    // 100,000 entries by 100 users over 200 keywords (a third on user keywords), one in
    // 50 with photos, one in 10 a reply, one a second apart; follows for u1.
    await db.query(`INSERT INTO kigo_core.users (id, name) SELECT 'u' || i, 'User ' || i FROM generate_series(0, 99) i`)
    await db.query(`INSERT INTO kigo_core.keywords (word) SELECT 'k' || i FROM generate_series(0, 199) i UNION ALL SELECT 'id:u' || i FROM generate_series(0, 99) i UNION ALL SELECT 'API'`)
    await db.query(`INSERT INTO kigo_core.entries (author, keyword, body, source, deployment, has_photos, in_reply_to_status_id, created_at)
      SELECT 'u' || (i % 100), CASE WHEN i % 3 = 0 THEN 'id:u' || (i % 100) ELSE 'k' || (i % 200) END, 'body ' || i, 'API',
        CASE WHEN i % 7 = 0 THEN 'global' ELSE 'domestic' END, i % 50 = 0, CASE WHEN i % 10 = 0 AND i > 10 THEN i - 5 END,
        now() - make_interval(secs => 100000 - i)
      FROM generate_series(1, 100000) i`)
    await db.query(`INSERT INTO kigo_core.user_follows (follower, followee) VALUES ('u1', 'u2'), ('u1', 'u3'), ('u3', 'u2')`)
    await db.query(`INSERT INTO kigo_core.keyword_follows (user_id, word) VALUES ('u1', 'k7')`)
    await db.query(`INSERT INTO kigo_core.stars (entry_id, user_id) SELECT id, 'u' || (id % 5) FROM kigo_core.entries WHERE id > 99900 AND id % 4 = 0`)
    await db.query('ANALYZE')
  }, 180_000)
  afterAll(async () => {
    await db?.close()
  })

  it('each source lists its entries, newest first', async () => {
    const pub = await store.timeline(query({ kind: 'public', deployment: 'domestic' }), null)
    expect(pub.entries).toHaveLength(20)
    expect(pub.entries.every((e) => e.deployment === 'domestic' && !e.keyword.startsWith('id:'))).toBe(true)
    const ids = pub.entries.map((e) => BigInt(e.id))
    expect([...ids].sort((a, b) => (a > b ? -1 : 1))).toEqual(ids)
    expect((await store.timeline(query({ kind: 'keyword', word: 'k7' }), null)).entries.every((e) => e.keyword === 'k7')).toBe(true)
    expect((await store.timeline(query({ kind: 'user', userId: 'u5' }), null)).entries.every((e) => e.authorId === 'u5')).toBe(true)
    const antenna = await store.timeline(query({ kind: 'friends', userId: 'u1' }, { count: 200 }), null)
    expect(new Set(antenna.entries.map((e) => (e.keyword === 'k7' ? 'k7' : e.authorId)))).toEqual(new Set(['u1', 'u2', 'u3', 'k7']))
    expect((await store.timeline(query({ kind: 'album', word: null }), null)).entries.every((e) => BigInt(e.id) % 50n === 0n)).toBe(true)
  })

  it('pages: deep pages, max_id anchors, since leaves out older entries', async () => {
    const src: TimelineSource = { kind: 'keyword', word: 'k1' }
    const deep = await store.timeline(query(src, { count: 200, page: 2 }), null)
    const first = await store.timeline(query(src, { count: 200, page: 1 }), null)
    expect(BigInt(deep.entries[0]!.id)).toBeLessThan(BigInt(first.entries[199]!.id))
    const anchored = await store.timeline(query(src, { count: 5, page: 2, maxId: first.entries[3]!.id }), null)
    expect(anchored.entries.map((e) => e.id)).toEqual(first.entries.slice(8, 13).map((e) => e.id))
    const since = first.entries[9]!.createdAt
    const recent = await store.timeline(query(src, { since }), null)
    expect(recent.entries.map((e) => e.id)).toEqual(first.entries.slice(0, 10).map((e) => e.id))
  })

  it('sort=hot: most stars first, then newest, within the window', async () => {
    const hot = await store.timeline(query({ kind: 'public', deployment: 'domestic' }, { sort: 'hot', hotSince: new Date(Date.now() - 3600_000) }), null)
    const counts = hot.entries.map((e) => hot.stars.get(e.id) ?? 0)
    expect(counts[0]).toBeGreaterThan(0)
    expect([...counts].sort((a, b) => b - a)).toEqual(counts)
  })

  it('a page costs four queries whatever its size: entries, replies, stars, followers', async () => {
    for (const count of [1, 20, 200]) {
      const before = log.length
      const page = await store.timeline(query({ kind: 'public', deployment: 'domestic' }, { count }), 'u1')
      expect(page.entries).toHaveLength(count)
      expect(log.length - before).toBe(4)
    }
    const page = await store.timeline(query({ kind: 'keyword', word: 'k5' }, { count: 200 }), 'u1')
    expect([...page.replies.values()].flat().length).toBeGreaterThan(0)
  })

  it('every timeline page is one index scan, never a sequential scan of entries', async () => {
    const shapes: Array<[string, TimelineQuery]> = [
      ['public', query({ kind: 'public', deployment: 'domestic' })],
      ['public, page 100 of 200', query({ kind: 'public', deployment: 'domestic' }, { count: 200, page: 100 })],
      ['public, since and max_id', query({ kind: 'public', deployment: 'domestic' }, { since: new Date(Date.now() - 600_000), maxId: '99990' })],
      ['public, hot', query({ kind: 'public', deployment: 'domestic' }, { sort: 'hot', hotSince: new Date(Date.now() - 3600_000) })],
      ['keyword', query({ kind: 'keyword', word: 'k3' })],
      ['user', query({ kind: 'user', userId: 'u3' })],
      ['friends', query({ kind: 'friends', userId: 'u1' })],
      ['album', query({ kind: 'album', word: null })],
      ['album of a keyword', query({ kind: 'album', word: 'k50' })],
    ]
    for (const [name, q] of shapes) {
      const before = log.length
      await store.timeline(q, null)
      const statement = log[before]!
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.sql}`, statement.params)).map((r) => r['QUERY PLAN']).join('\n')
      expect(plan, `${name}:\n${plan}`).not.toMatch(/Seq Scan on entries/)
      expect(plan, `${name}:\n${plan}`).toMatch(/Index|Bitmap/)
    }
  })
})
