// The timeline queries (docs/api.md#timelines) on both backends: what they return, that a page costs
// a constant number of queries whatever its size, and that on a store of 100,000 entries
// every page is an index scan (no sequential scan of entries).
import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrate, openDb, type Db } from '../../../src/common/sql.js'
import { coreSchema, migrations } from '../../../src/core/store/migrations.js'
import { hotCandidates, SqlContentStore } from '../../../src/core/store/sql-content-store.js'
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
  /** The recording Db, for stores of their own (nothing kept from other tests). */
  let recorded: Db

  beforeAll(async () => {
    db = await openDb({ ...backend(), timeouts: { connectTimeoutMs: 10_000, statementTimeoutMs: 120_000 } })
    await migrate(db, coreSchema, migrations)
    const r = recording(db)
    log = r.log
    recorded = r.db
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
    // A heavy follower: u4 follows 60 users and 30 keywords. And 20,000 keywords without
    // entries, so that a substring search must not read every keyword.
    await db.query(`INSERT INTO kigo_core.user_follows (follower, followee) SELECT 'u4', 'u' || i FROM generate_series(10, 69) i`)
    await db.query(`INSERT INTO kigo_core.keyword_follows (user_id, word) SELECT 'u' || (i % 90 + 5), 'k' || i FROM generate_series(0, 29) i UNION ALL SELECT 'u4', 'k' || i FROM generate_series(100, 129) i`)
    await db.query(`INSERT INTO kigo_core.keywords (word) SELECT 'topic' || i FROM generate_series(1, 20000) i`)
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

  it('every statement of a timeline page reads through an index, never a sequential scan of entries', async () => {
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
      // Every statement of the page that reads entries: the window's start, the page, its replies.
      for (const statement of log.slice(before).filter((r) => r.sql.includes('kigo_core.entries'))) {
        const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.sql}`, statement.params)).map((r) => r['QUERY PLAN']).join('\n')
        expect(plan, `${name}:\n${plan}`).not.toMatch(/Seq Scan on entries/)
        expect(plan, `${name}:\n${plan}`).toMatch(/Index|Bitmap/)
      }
    }
  })

  /** The plan of the first statement `call` sends whose text matches `pick` (all of them when none is given). */
  const planOf = async (call: () => Promise<unknown>, pick: RegExp = /./): Promise<string> => {
    const before = log.length
    await call()
    const statement = log.slice(before).find((r) => pick.test(r.sql))!
    return (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.sql}`, statement.params)).map((r) => r['QUERY PLAN']).join('\n')
  }

  interface Row { id: string; author: string; keyword: string; created_at: Date; stars: number }
  /** Every entry with its star count, read plainly: the reference the pages are compared with. */
  const everything = async (): Promise<Row[]> =>
    (await db.query<Row>(`SELECT e.id::text AS id, e.author, e.keyword, e.created_at, (SELECT count(*)::int FROM kigo_core.stars s WHERE s.entry_id = e.id) AS stars FROM kigo_core.entries e`))
      .map((r) => ({ ...r, created_at: new Date(r.created_at), stars: Number(r.stars) }))
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1))

  it('the antenna of a heavy follower: the pages a plain filter gives, read through the author and keyword indexes', async () => {
    const all = await everything()
    const users = new Set(['u4', ...Array.from({ length: 60 }, (_, i) => `u${i + 10}`)])
    const words = new Set(Array.from({ length: 30 }, (_, i) => `k${i + 100}`))
    const antenna = all.filter((r) => users.has(r.author) || words.has(r.keyword))
    for (const [count, page] of [[20, 1], [20, 50], [200, 100]] as const) {
      const got = await store.timeline(query({ kind: 'friends', userId: 'u4' }, { count, page }), null)
      expect(got.entries.map((e) => e.id)).toEqual(antenna.slice((page - 1) * count, page * count).map((r) => r.id))
    }
    const sparse = await store.timeline(query({ kind: 'friends', userId: 'u1' }, { count: 200, page: 3 }), null)
    expect(sparse.entries.map((e) => e.id)).toEqual(all.filter((r) => ['u1', 'u2', 'u3'].includes(r.author) || r.keyword === 'k7').slice(400, 600).map((r) => r.id))
    // A dense antenna is a walk down the primary key, each row checked against the followed
    // users and keywords hashed; no statement of it reads entries in full.
    const walk = await planOf(() => new SqlContentStore(recorded).timeline(query({ kind: 'friends', userId: 'u4' }, { page: 50 }), null), /IN \(SELECT unnest/)
    expect(walk).toMatch(/Index Scan Backward using entries_pkey/)
    expect(walk).toMatch(/hashed SubPlan/)
    expect(walk).not.toMatch(/Seq Scan on entries/)
  })

  it('kept antenna IDs: a later call walks only what was written since; a new entry, a follow and a deletion show at once', async () => {
    const own = new SqlContentStore(recorded)
    const users = new Set(['u4', ...Array.from({ length: 60 }, (_, i) => `u${i + 10}`)])
    const words = new Set(Array.from({ length: 30 }, (_, i) => `k${i + 100}`))
    // The plain filter, read without the antenna's statements (and without every entry's stars).
    const expected = async (page: number) =>
      (await db.query<{ id: string }>(
        `SELECT e.id::text AS id FROM kigo_core.entries e WHERE e.author = ANY ($1::text[]) OR e.keyword = ANY ($2::text[]) ORDER BY e.id DESC LIMIT 20 OFFSET $3`,
        [[...users], [...words], (page - 1) * 20],
      )).map((r) => r.id)
    const antennaPage = async (page: number) => (await own.timeline(query({ kind: 'friends', userId: 'u4' }, { page }), null)).entries.map((e) => e.id)
    expect(await antennaPage(1)).toEqual(await expected(1))
    const newestBefore = (await db.query<{ id: string }>('SELECT max(id)::text AS id FROM kigo_core.entries'))[0]!.id
    const [added] = await db.query<{ id: string }>(`INSERT INTO kigo_core.entries (author, keyword, body, source, deployment) VALUES ('u10', 'k0', 'new', 'API', 'domestic') RETURNING id::text AS id`)
    const before = log.length
    expect((await antennaPage(1))[0]).toBe(added!.id)
    expect(await antennaPage(3)).toEqual(await expected(3))
    // Only the entries written since were walked.
    const walks = log.slice(before).filter((r) => /IN \(SELECT unnest/.test(r.sql))
    expect(walks.length).toBeGreaterThan(0)
    for (const w of walks) expect(BigInt(w.params[2] as string)).toBeGreaterThanOrEqual(BigInt(newestBefore))
    // A follow changes what the antenna is: read anew.
    await db.query(`INSERT INTO kigo_core.user_follows (follower, followee) VALUES ('u4', 'u99')`)
    users.add('u99')
    for (const page of [1, 2, 50]) expect(await antennaPage(page)).toEqual(await expected(page))
    // A deleted entry leaves no hole in the page.
    await db.query('DELETE FROM kigo_core.entries WHERE id = $1::bigint', [added!.id])
    expect(await antennaPage(1)).toEqual(await expected(1))
    await db.query(`DELETE FROM kigo_core.user_follows WHERE follower = 'u4' AND followee = 'u99'`)
    users.delete('u99')
    expect(await antennaPage(2)).toEqual(await expected(2))
  })

  it('a sparse antenna: read through the author and keyword indexes once a walk finds too few, the pages a plain filter gives', async () => {
    // Five entries spread over the store move to a keyword of their own; "loner" follows it
    // and a user without entries.
    await db.query(`INSERT INTO kigo_core.keywords (word) VALUES ('rare')`)
    await db.query(`UPDATE kigo_core.entries SET keyword = 'rare' WHERE id IN (5000, 25000, 50000, 75000, 99000)`)
    await db.query(`INSERT INTO kigo_core.users (id, name) VALUES ('loner', 'Loner'), ('quiet', 'Quiet')`)
    await db.query(`INSERT INTO kigo_core.user_follows (follower, followee) VALUES ('loner', 'quiet')`)
    await db.query(`INSERT INTO kigo_core.keyword_follows (user_id, word) VALUES ('loner', 'rare')`)
    const before = log.length
    const got = await store.timeline(query({ kind: 'friends', userId: 'loner' }), null)
    expect(got.entries.map((e) => e.id)).toEqual(['99000', '75000', '50000', '25000', '5000'])
    expect((await store.timeline(query({ kind: 'friends', userId: 'loner' }, { maxId: '49999' }), null)).entries.map((e) => e.id)).toEqual(['25000', '5000'])
    const bySource = log.slice(before).find((r) => /CROSS JOIN LATERAL/.test(r.sql))
    expect(bySource, 'the rest read by source').toBeDefined()
    const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${bySource!.sql}`, bySource!.params)).map((r) => r['QUERY PLAN']).join('\n')
    expect(plan).toMatch(/entries_keyword_id/)
    expect(plan).toMatch(/entries_author_id/)
    expect(plan).not.toMatch(/Seq Scan on entries/)
    // Its sort=hot: the same five, the one with stars first.
    await db.query(`INSERT INTO kigo_core.stars (entry_id, user_id) VALUES (50000, 'u1'), (50000, 'u2'), (5000, 'u1')`)
    const hot = await store.timeline(query({ kind: 'friends', userId: 'loner' }, { sort: 'hot', hotSince: new Date(0) }), null)
    expect(hot.entries.map((e) => e.id)).toEqual(['50000', '5000', '99000', '75000', '25000'])
  })

  it(`sort=hot ranks the newest ${hotCandidates} entries of the window by stars, as a plain sort of them does`, async () => {
    await db.query(`INSERT INTO kigo_core.stars (entry_id, user_id) SELECT id, 'fan' || f FROM kigo_core.entries, generate_series(1, (id % 7)::int) f WHERE id > 98000 AND id % 3 = 0 ON CONFLICT DO NOTHING`)
    const all = await everything()
    const hotSince = new Date(Date.now() - 3 * 3600_000)
    const sources: Array<[TimelineSource, (r: Row) => boolean]> = [
      [{ kind: 'keyword', word: 'k7' }, (r) => r.keyword === 'k7'],
      [{ kind: 'user', userId: 'u5' }, (r) => r.author === 'u5'],
      [{ kind: 'friends', userId: 'u4' }, (r) => r.author === 'u4' || (Number(r.author.slice(1)) >= 10 && Number(r.author.slice(1)) <= 69) || /^k1[0-2][0-9]$/.test(r.keyword)],
    ]
    for (const [source, has] of sources) {
      const ranked = all
        .filter((r) => has(r) && r.created_at >= hotSince)
        .slice(0, hotCandidates)
        .sort((a, b) => b.stars - a.stars || (BigInt(b.id) > BigInt(a.id) ? 1 : -1))
      for (const page of [1, 3]) {
        const got = await store.timeline(query(source, { sort: 'hot', hotSince, page }), null)
        expect(got.entries.map((e) => e.id), `${source.kind} page ${page}`).toEqual(ranked.slice((page - 1) * 20, page * 20).map((r) => r.id))
      }
    }
    // The window's first entry by entries_created_at; the candidates from the keyword's index
    // (alone, when its pages are all visible), their stars from the stars' primary key; then the page's entries by ID.
    const hot = () => store.timeline(query({ kind: 'keyword', word: 'k7' }, { sort: 'hot', hotSince }), null)
    expect(await planOf(hot, /ORDER BY e.created_at LIMIT 1/)).toMatch(/entries_created_at/)
    const ranking = await planOf(hot, /WITH c AS MATERIALIZED/)
    expect(ranking).toMatch(/Index (Only )?Scan using entries_keyword_id|Bitmap Index Scan on entries_keyword_id/)
    expect(ranking).toMatch(/stars_pkey/)
    expect(ranking).not.toMatch(/Seq Scan on (entries|stars)/)
  })

  /** Every keyword with its entry count, in keywords/list's order: the plain reference. */
  const keywordsByCount = async (): Promise<Array<{ word: string; n: number }>> =>
    (await db.query<{ word: string; n: number }>(`SELECT k.word, (SELECT count(*)::int FROM kigo_core.entries e WHERE e.keyword = k.word) AS n FROM kigo_core.keywords k`))
      .map((w) => ({ word: w.word, n: Number(w.n) }))
      .sort((a, b) => b.n - a.n || Buffer.compare(Buffer.from(a.word), Buffer.from(b.word)))
  const listed = (ks: Array<{ word: string; entryCount: number }>) => ks.map((k) => [k.word, k.entryCount])

  it('keywords/list: by entry count, and a substring through the keywords\' suffixes, as a plain filter gives, on both paths', async () => {
    const ordered = await keywordsByCount()
    // 'topic' and 'opic' start about 20,000 suffixes: past the bound of the first page, so the
    // walk by entry count answers them; the rest are ranked from their suffixes. A bound of 3
    // sends every filter with more than three suffixes to the walk.
    const filters = ['c123', 'OPIC99', 'k1', 'k', 'topic', 'opic', 'TOPIC1999', '1', '%', '_', '\\', 'no such word']
    for (const substringCandidates of [10_000, 3]) {
      const tuned = new SqlContentStore(recorded, { substringCandidates })
      for (const filter of filters) {
        for (const [limit, offset] of [[100, 0], [100, 200], [7, 3]] as const) {
          const expected = ordered.filter((w) => w.word.toLowerCase().includes(filter.toLowerCase())).slice(offset, offset + limit)
          const got = await tuned.listKeywords(filter, limit, offset)
          expect(listed(got), `${filter} ${limit}+${offset} (bound ${substringCandidates})`).toEqual(expected.map((w) => [w.word, w.n]))
        }
      }
    }
    expect((await store.listKeywords(null, 100, 100)).map((k) => k.word)).toEqual(ordered.slice(100, 200).map((w) => w.word))
    // Which way each went: the statements it sent.
    const ways = async (filter: string, substringCandidates: number) => {
      const before = log.length
      await new SqlContentStore(recorded, { substringCandidates }).listKeywords(filter, 100, 0)
      return log.slice(before).map((r) => (/MATERIALIZED/.test(r.sql) ? 'walk' : /k\.word IN/.test(r.sql) ? 'ranked' : /count\(\*\)/.test(r.sql) ? 'count' : r.sql))
    }
    expect(await ways('c123', 10_000)).toEqual(['count', 'ranked'])
    expect(await ways('topic', 10_000)).toEqual(['count', 'walk'])
    // Eleven matches that rank low (no entries): past the walk's limit, they are ranked themselves.
    expect(await ways('TOPIC1999', 3)).toEqual(['count', 'walk', 'ranked'])
    // A rare substring: its suffixes by their key, its keywords by theirs, nothing scanned whole.
    const rare = await planOf(() => store.listKeywords('c123', 100, 0), /k\.word IN/)
    expect(rare).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) keyword_suffixes_pkey/)
    expect(rare).toMatch(/keywords_pkey/)
    expect(rare, rare).not.toMatch(/Seq Scan on keyword(s|_suffixes)\b/)
    const counting = await planOf(() => store.listKeywords('c123', 100, 0), /count\(\*\)/)
    expect(counting, counting).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) keyword_suffixes_pkey/)
    expect(counting).toMatch(/Index Cond: \(\(suffix >= 'c123'::text COLLATE "C"\) AND \(suffix < 'c124'::text COLLATE "C"\)\)/)
    // A common one: the keywords by entry count, from the top.
    const common = await planOf(() => store.listKeywords('topic', 100, 0), /MATERIALIZED/)
    expect(common).toMatch(/keywords_entry_count/)
    expect(common).not.toMatch(/Seq Scan on keywords/)
    expect(await planOf(() => store.listKeywords(null, 100, 0))).toMatch(/keywords_entry_count/)
  })

  it('keywords/list: any case, any script, wildcards as text, substrings longer than a kept suffix, and new keywords found at once', async () => {
    const words = [
      'Ünïcode Straße', 'ねこのきもち', 'ねこねこ', 'MiXeD CaSe', 'banana', 'a%b_c\\d', 'x'.repeat(50) + 'tail',
      `edge\u{10FFFF}`, `edge\u{10FFFF}\u{10FFFF}z`, `pre\uD7FF`, `pre\uE000`, `pre\u{10000}`,
    ]
    await db.query(`INSERT INTO kigo_core.keywords (word) SELECT unnest($1::text[])`, [words])
    await store.createEntry({ authorId: 'u9', authorName: 'User 9', keyword: 'freshly posted', source: 'API', deployment: 'domestic', inReplyToStatusId: null }, [], () => 'new')
    const ordered = await keywordsByCount()
    const filters = [
      'straße', 'ÜNÏ', 'ねこ', 'こね', 'mixed case', 'ana', 'nan', '%b_', '\\d', 'a%b_c\\d', 'x'.repeat(40), 'x'.repeat(33) + 'tai',
      'edge', `edge\u{10FFFF}`, `\u{10FFFF}`, `\u{10FFFF}\u{10FFFF}`, `pre\uD7FF`, 'pre', 'freshly', 'posted',
    ]
    for (const substringCandidates of [10_000, 1]) {
      const tuned = new SqlContentStore(recorded, { substringCandidates })
      for (const filter of filters) {
        // lower() of PostgreSQL and of JavaScript agree on these words.
        const expected = ordered.filter((w) => w.word.toLowerCase().includes(filter.toLowerCase())).slice(0, 100)
        expect(expected.length, filter).toBeGreaterThan(0)
        expect(listed(await tuned.listKeywords(filter, 100, 0)), `${filter} (bound ${substringCandidates})`).toEqual(expected.map((w) => [w.word, w.n]))
      }
    }
    // Each keyword once, however often it holds the substring. Its 54 suffixes are kept cut to 32
    // characters, so the first 19 (all x) are one.
    expect(await store.listKeywords('x'.repeat(51), 100, 0)).toEqual([])
    expect((await store.listKeywords('x', 100, 0)).filter((k) => k.word.startsWith('xxx'))).toHaveLength(1)
    const [kept] = await db.query<{ n: number; longest: number }>(
      `SELECT count(*)::int AS n, max(length(suffix))::int AS longest FROM kigo_core.keyword_suffixes WHERE word = $1`, ['x'.repeat(50) + 'tail'],
    )
    expect(kept).toEqual({ n: 36, longest: 32 })
  })

  it('the kept counts equal counting: entries and followers of keywords, followers of users, after writes and deletes', async () => {
    await store.follow({ id: 'u7', name: 'User 7' }, 'u2')
    await store.unfollow('u3', 'u2')
    await store.followKeyword({ id: 'u8', name: 'User 8' }, 'k7')
    await store.unfollowKeyword('u1', 'k7')
    await store.createEntry({ authorId: 'u9', authorName: 'User 9', keyword: 'newword', source: 'API', deployment: 'domestic', inReplyToStatusId: null }, [], () => 'counted')
    const doomed = (await store.timeline(query({ kind: 'keyword', word: 'k9' }, { count: 3 }), null)).entries
    for (const e of doomed) await store.deleteEntry(e.id)
    const keywords = await db.query<{ word: string; kept: string; counted: string; kf: string; kcounted: string }>(
      `SELECT k.word, k.entry_count::text AS kept, (SELECT count(*) FROM kigo_core.entries e WHERE e.keyword = k.word)::text AS counted,
              k.followers_count::text AS kf, (SELECT count(*) FROM kigo_core.keyword_follows f WHERE f.word = k.word)::text AS kcounted
       FROM kigo_core.keywords k`,
    )
    expect(keywords.filter((k) => k.kept !== k.counted || k.kf !== k.kcounted)).toEqual([])
    expect((await store.getKeyword('newword'))!.entryCount).toBe(1)
    const users = await db.query<{ id: string; kept: string; counted: string }>(
      `SELECT u.id, u.followers_count::text AS kept, (SELECT count(*) FROM kigo_core.user_follows f WHERE f.followee = u.id)::text AS counted FROM kigo_core.users u`,
    )
    expect(users.filter((u) => u.kept !== u.counted)).toEqual([])
    expect((await store.getUserWithFollowers('u2'))!.followersCount).toBe(2)
  })
})
