// The timeline scenarios' store (docs/performance.md#the-groups-and-their-keys): entries inserted in bulk straight into
// PostgreSQL must be what the core reads as its own: on the public timeline of the
// deployment already posted to, newest first, several authors and replies on a page,
// and the core's next entry numbered after them.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedTimeline } from '../../bench/timeline-seed.js'
import { migrate, openDb, type Db } from '../../src/common/sql.js'
import { coreSchema, migrations } from '../../src/core/store/migrations.js'
import { SqlContentStore } from '../../src/core/store/sql-content-store.js'
import type { NewEntry, TimelineQuery } from '../../src/core/store/types.js'
import { freshPostgres } from '../helpers/services.js'

const pg = await freshPostgres()

describe.skipIf(pg === null)('bulk-seeded timeline store', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kigo-tl-seed-'))
  let db: Db
  let store: SqlContentStore
  const post = (over: Partial<NewEntry> = {}) =>
    store.createEntry({ authorId: 'benchuser', authorName: 'Bench User', keyword: 'bench', source: 'kigo bench app', deployment: 'global', inReplyToStatusId: null, ...over }, [], () => 'posted')
  const page = (over: Partial<TimelineQuery> = {}) =>
    store.timeline({ source: { kind: 'public', deployment: 'global' }, count: 20, page: 1, since: null, maxId: null, sort: 'new', hotSince: new Date(0), ...over }, null)

  beforeAll(async () => {
    db = await openDb({ databaseUrl: pg!.url, dataDir })
    await migrate(db, coreSchema, migrations)
    store = new SqlContentStore(db)
  })

  afterAll(async () => {
    await db?.close()
    await pg?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('fills the store up to the total, on the public timeline of the deployment already posted to', async () => {
    for (let i = 0; i < 3; i++) await post()
    const seeded = await seedTimeline({ databaseUrl: pg!.url, total: 2000 })
    expect(seeded).toMatchObject({ entries: 2000, inserted: 1997, deployment: 'global' })
    const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM kigo_core.entries')
    expect(Number(counted[0]!.n)).toBe(2000)

    const first = await page()
    const ids = first.entries.map((e) => BigInt(e.id))
    expect(ids).toHaveLength(20)
    expect([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))).toEqual(ids)
    expect(new Set(first.entries.map((e) => e.authorId)).size).toBeGreaterThan(10)
    expect(first.entries.every((e) => e.deployment === 'global' && e.source === 'kigo bench app')).toBe(true)
    // One in ten replies to the entry before it: the page's replies query finds them.
    expect(first.replies.size).toBeGreaterThan(0)
    for (const [target, replies] of first.replies) {
      const author = first.entries.find((e) => e.id === target)?.authorId
      expect(author).toBeDefined()
      for (const r of replies) expect(r.inReplyToUserId).toBe(author)
    }
    // Deep pages reach the entries posted before the bulk insert.
    const last = await page({ count: 20, page: 100 })
    expect(last.entries.map((e) => e.body)).toContain('posted')
  })

  it('leaves the core numbering its next entry after the bulk, and adds nothing when the store is full', async () => {
    const max = await db.query<{ id: string }>('SELECT max(id)::text AS id FROM kigo_core.entries')
    const next = await post()
    expect(BigInt(next.id)).toBeGreaterThan(BigInt(max[0]!.id))
    expect((await page()).entries[0]!.id).toBe(next.id)
    expect(await seedTimeline({ databaseUrl: pg!.url, total: 2000 })).toMatchObject({ entries: 2001, inserted: 0 })
  })
})
