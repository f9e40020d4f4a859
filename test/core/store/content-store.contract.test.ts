// The content store's contract (docs/api.md, docs/operations.md#stored-data), run once per backend: the embedded
// database in a fresh data directory, and PostgreSQL in a fresh database.
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, test } from 'vitest'
import { openContentStore } from '../../../src/core/store/index.js'
import { migrate, openDb } from '../../../src/common/sql.js'
import { coreSchema, migrations } from '../../../src/core/store/migrations.js'
import { ReplyTargetNotFound, type ContentStore, type NewEntry, type NewPhoto, type PhotoRow } from '../../../src/core/store/types.js'
import { describeBackends, storageBackends, type StorageBackend } from '../../helpers/backends.js'

const backends = await storageBackends('store')

// Distinct names per test, so tests within one suite never see each other's rows.
let counter = 0
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`

function newEntry(over: Partial<NewEntry> = {}): NewEntry {
  const author = over.authorId ?? unique('u')
  return {
    authorId: author,
    authorName: 'Author',
    keyword: `id:${author}`,
    source: 'API',
    deployment: 'domestic',
    inReplyToStatusId: null,
    ...over,
  }
}

const plainBody = (text: string) => (_photos: PhotoRow[]) => text

function photo(bytes: Buffer, over: Partial<NewPhoto> = {}): NewPhoto {
  return { contentType: 'image/png', ext: 'png', bytes, title: '', folder: '', ...over }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')

describeBackends('content store', backends, (backend) => {
  let store: ContentStore
  const reopen = () => openContentStore(backend())

  beforeAll(async () => {
    store = await reopen()
  })

  afterAll(async () => {
    await store?.close()
  })

  test('answers ping', async () => {
    await expect(store.ping()).resolves.toBeUndefined()
  })

  test('keeps and updates the public user profile', async () => {
    const id = unique('user')
    expect(await store.getUser(id)).toBeNull()
    await store.upsertUser({ id, name: 'First Name' })
    expect(await store.getUser(id)).toEqual({ id, name: 'First Name' })
    await store.upsertUser({ id, name: '新しい名前 ✨' })
    expect(await store.getUser(id)).toEqual({ id, name: '新しい名前 ✨' })
  })

  test('round-trips an entry with unicode text exactly', async () => {
    const author = unique('writer')
    const text = 'こんにちは 🌸🎉 世界\nsecond line\twith tab\r\n  trailing  \u{1F468}\u200D\u{1F469}\u200D\u{1F467}'
    const keyword = `季語 ${unique('kw')} 🍂`
    const source = `クライアント ${unique('src')}`
    const before = Date.now()
    const created = await store.createEntry(
      newEntry({ authorId: author, authorName: '作者 😀', keyword, source, deployment: 'global' }),
      [],
      plainBody(text),
    )
    expect(created.id).toMatch(/^[0-9]+$/)
    expect(created).toMatchObject({
      authorId: author,
      authorName: '作者 😀',
      keyword,
      body: text,
      source,
      deployment: 'global',
      inReplyToStatusId: null,
      inReplyToUserId: null,
    })
    expect(created.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5_000)
    expect(created.createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 5_000)
    expect(await store.getEntry(created.id)).toEqual(created)
    expect(await store.getUser(author)).toEqual({ id: author, name: '作者 😀' })
  })

  test('creates the keyword and the source keyword when missing, and reuses them', async () => {
    const keyword = unique('keyword')
    const source = unique('client')
    expect(await store.keywordExists(keyword)).toBe(false)
    expect(await store.keywordExists(source)).toBe(false)
    await store.createEntry(newEntry({ keyword, source }), [], plainBody('one'))
    expect(await store.keywordExists(keyword)).toBe(true)
    expect(await store.keywordExists(source)).toBe(true)
    const again = await store.createEntry(newEntry({ keyword, source }), [], plainBody('two'))
    expect((await store.getEntry(again.id))?.keyword).toBe(keyword)
    // Keyword and source may be the same word.
    const same = unique('same')
    const e = await store.createEntry(newEntry({ keyword: same, source: same }), [], plainBody('three'))
    expect(await store.getEntry(e.id)).toMatchObject({ keyword: same, source: same })
  })

  test('records the author display name from the latest post', async () => {
    const author = unique('renamed')
    const first = await store.createEntry(newEntry({ authorId: author, authorName: 'Old' }), [], plainBody('a'))
    await store.createEntry(newEntry({ authorId: author, authorName: 'New' }), [], plainBody('b'))
    expect(await store.getUser(author)).toEqual({ id: author, name: 'New' })
    expect((await store.getEntry(first.id))?.authorName).toBe('New')
  })

  test('registered users: a copy takes the name of a higher version only, and a request\'s identity no longer renames it', async () => {
    const [a, b] = [unique('sent'), unique('sent')]
    await store.provisionUsers([{ id: a, name: 'Ann', version: 1 }, { id: b, name: 'Ben', version: 3 }])
    expect(await store.getUser(a)).toEqual({ id: a, name: 'Ann' })
    // Sends that cross: the older arrives last and changes nothing.
    await store.provisionUsers([{ id: b, name: 'Benjamin', version: 4 }])
    await store.provisionUsers([{ id: b, name: 'Ben', version: 3 }, { id: a, name: 'Ann', version: 1 }])
    expect(await store.getUser(b)).toEqual({ id: b, name: 'Benjamin' })
    // An identity a gateway cached before the rename: the entry and the copy keep the sent name.
    const entry = await store.createEntry(newEntry({ authorId: b, authorName: 'Ben' }), [], plainBody('a'))
    expect(entry.authorName).toBe('Benjamin')
    await store.upsertUser({ id: b, name: 'Ben' })
    expect(await store.follow({ id: b, name: 'Ben' }, a)).toBe(true)
    expect(await store.getUser(b)).toEqual({ id: b, name: 'Benjamin' })
    // A copy made by a request (never sent) takes the gateway's name when it is sent.
    const c = unique('late')
    await store.upsertUser({ id: c, name: 'From a request' })
    await store.provisionUsers([{ id: c, name: 'Registered', version: 1 }])
    expect(await store.getUser(c)).toEqual({ id: c, name: 'Registered' })
    await store.provisionUsers([])
  })

  test('a reply records its target and the target author', async () => {
    const target = await store.createEntry(newEntry({ authorId: unique('alice') }), [], plainBody('original'))
    const reply = await store.createEntry(
      newEntry({ authorId: unique('bob'), inReplyToStatusId: target.id }),
      [],
      plainBody('@alice plain text'),
    )
    expect(reply.inReplyToStatusId).toBe(target.id)
    expect(reply.inReplyToUserId).toBe(target.authorId)
    expect(await store.getEntry(reply.id)).toMatchObject({ inReplyToStatusId: target.id, inReplyToUserId: target.authorId })
  })

  test('a reply to a missing entry is refused and stores nothing', async () => {
    const author = unique('nobody')
    const keyword = unique('never')
    const missing = String(BigInt((await store.createEntry(newEntry(), [], plainBody('x'))).id) + 1_000_000n)
    for (const target of [missing, 'abc', '', '-1', '99999999999999999999999']) {
      await expect(
        store.createEntry(newEntry({ authorId: author, keyword, inReplyToStatusId: target }), [], plainBody('reply')),
      ).rejects.toBeInstanceOf(ReplyTargetNotFound)
    }
    expect(await store.keywordExists(keyword)).toBe(false)
    expect(await store.getUser(author)).toBeNull()
  })

  test('a text entry the database refuses stores nothing, neither its author nor its keywords', async () => {
    const author = unique('refused')
    const keyword = unique('kw')
    const source = unique('src')
    // The deployment's CHECK fails on the entry itself, after the author and the keywords
    // were written by the same statement: all of it must be undone.
    const refused = newEntry({ authorId: author, keyword, source, deployment: 'elsewhere' as never })
    await expect(store.createEntry(refused, [], plainBody('no'))).rejects.toThrow()
    expect(await store.keywordExists(keyword)).toBe(false)
    expect(await store.keywordExists(source)).toBe(false)
    expect(await store.getUser(author)).toBeNull()
  })

  test('a reply to a deleted entry is refused', async () => {
    const target = await store.createEntry(newEntry(), [], plainBody('soon gone'))
    await store.deleteEntry(target.id)
    await expect(store.createEntry(newEntry({ inReplyToStatusId: target.id }), [], plainBody('late'))).rejects.toBeInstanceOf(
      ReplyTargetNotFound,
    )
  })

  test('deleting returns the entry, removes it and its stars, and keeps replies pointing at it', async () => {
    const target = await store.createEntry(newEntry(), [], plainBody('to delete'))
    const reply = await store.createEntry(newEntry({ inReplyToStatusId: target.id }), [], plainBody('reply'))
    const fan = unique('fan')
    expect(await store.addStar(target.id, fan)).toBe(true)

    expect(await store.deleteEntry(target.id)).toEqual(target)
    expect(await store.getEntry(target.id)).toBeNull()
    expect(await store.hasStar(target.id, fan)).toBe(false)
    expect(await store.addStar(target.id, fan)).toBe(false)
    expect(await store.deleteEntry(target.id)).toBeNull()
    expect(await store.getEntry(reply.id)).toMatchObject({ inReplyToStatusId: target.id, inReplyToUserId: target.authorId })
  })

  test('deleting an unknown or malformed id returns null', async () => {
    expect(await store.deleteEntry('987654321987')).toBeNull()
    expect(await store.deleteEntry('not-a-number')).toBeNull()
  })

  test('getEntry returns null for unknown and malformed ids', async () => {
    for (const id of ['0', '987654321987', 'abc', '', '12a', '1.5', '-3', '99999999999999999999999']) {
      expect(await store.getEntry(id)).toBeNull()
    }
  })

  test('stars are idempotent both ways', async () => {
    const e = await store.createEntry(newEntry(), [], plainBody('star me'))
    const fan = unique('fan')
    const other = unique('other')
    expect(await store.hasStar(e.id, fan)).toBe(false)
    expect(await store.addStar(e.id, fan)).toBe(true)
    expect(await store.addStar(e.id, fan)).toBe(true)
    expect(await store.hasStar(e.id, fan)).toBe(true)
    expect(await store.hasStar(e.id, other)).toBe(false)
    expect(await store.removeStar(e.id, fan)).toBe(true)
    expect(await store.removeStar(e.id, fan)).toBe(true)
    expect(await store.hasStar(e.id, fan)).toBe(false)
    expect(await store.removeStar(e.id, other)).toBe(true)
  })

  test('getEntryFor tells whether the viewer starred the entry', async () => {
    const e = await store.createEntry(newEntry(), [], plainBody('seen by'))
    const fan = unique('fan')
    expect(await store.getEntryFor(e.id, fan)).toEqual({ entry: e, favorited: false })
    await store.addStar(e.id, fan)
    expect(await store.getEntryFor(e.id, fan)).toEqual({ entry: e, favorited: true })
    expect(await store.getEntryFor(e.id, unique('other'))).toEqual({ entry: e, favorited: false })
    expect(await store.getEntryFor(e.id, null)).toEqual({ entry: e, favorited: false })
    expect(await store.getEntryFor('987654321987', fan)).toBeNull()
    expect(await store.getEntryFor('abc', fan)).toBeNull()
  })

  test('concurrent repeated stars all succeed and leave one star', async () => {
    const e = await store.createEntry(newEntry(), [], plainBody('popular'))
    const fan = unique('fan')
    const results = await Promise.all(Array.from({ length: 10 }, () => store.addStar(e.id, fan)))
    expect(results).toEqual(Array(10).fill(true))
    expect(await store.hasStar(e.id, fan)).toBe(true)
    expect(await store.removeStar(e.id, fan)).toBe(true)
    expect(await store.hasStar(e.id, fan)).toBe(false)
  })

  test('stars on unknown entries report false and store nothing', async () => {
    const fan = unique('fan')
    for (const id of ['987654321987', 'abc', '']) {
      expect(await store.addStar(id, fan)).toBe(false)
      expect(await store.removeStar(id, fan)).toBe(false)
      expect(await store.hasStar(id, fan)).toBe(false)
    }
  })

  test('photos posted with an entry are stored first, in order, and named in the body', async () => {
    const author = unique('photographer')
    const first = randomBytes(2048)
    const second = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
    let seen: PhotoRow[] = []
    const e = await store.createEntry(
      newEntry({ authorId: author, source: 'camera app', deployment: 'global' }),
      [photo(first, { contentType: 'image/jpeg', ext: 'jpg' }), photo(second)],
      (photos) => {
        seen = photos
        return ['caption', ...photos.map((p) => `/photos/${p.userId}/${p.id}.${p.ext}`)].join('\n')
      },
    )
    expect(seen).toHaveLength(2)
    expect(BigInt(seen[1]!.id)).toBeGreaterThan(BigInt(seen[0]!.id))
    expect(e.body).toBe(`caption\n/photos/${author}/${seen[0]!.id}.jpg\n/photos/${author}/${seen[1]!.id}.png`)
    expect(seen[0]).toMatchObject({ userId: author, contentType: 'image/jpeg', ext: 'jpg', source: 'camera app', deployment: 'global' })

    const got = await store.getPhoto(author, seen[1]!.id)
    expect(got?.bytes.equals(second)).toBe(true)
    expect(got).toMatchObject({ sha256: sha256(second), size: 256, contentType: 'image/png', ext: 'png' })
    expect((await store.getPhoto(author, seen[0]!.id))?.bytes.equals(first)).toBe(true)
  })

  test('a failing entry insert keeps none of its photos', async () => {
    const author = unique('unlucky')
    let ids: string[] = []
    await expect(
      store.createEntry(newEntry({ authorId: author }), [photo(randomBytes(64))], (photos) => {
        ids = photos.map((p) => p.id)
        throw new Error('compose failed')
      }),
    ).rejects.toThrow('compose failed')
    expect(ids).toHaveLength(1)
    expect(await store.getPhoto(author, ids[0]!)).toBeNull()
    expect(await store.getUser(author)).toBeNull()
  })

  test('a photo round-trips byte for byte with its hash and size', async () => {
    const owner = unique('owner')
    const bytes = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]), randomBytes(300_000)])
    const before = Date.now()
    const created = await store.createPhoto(owner, 'Owner 📷', 'uploader', 'domestic', photo(bytes, { title: 'タイトル', folder: 'trips' }))
    expect(created).toMatchObject({
      userId: owner,
      contentType: 'image/png',
      ext: 'png',
      title: 'タイトル',
      folder: 'trips',
      source: 'uploader',
      deployment: 'domestic',
      sha256: sha256(bytes),
      size: bytes.length,
    })
    expect(created.id).toMatch(/^[0-9]+$/)
    expect(created.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5_000)
    expect(await store.getUser(owner)).toEqual({ id: owner, name: 'Owner 📷' })

    const got = await store.getPhoto(owner, created.id)
    expect(got).not.toBeNull()
    expect(Buffer.isBuffer(got!.bytes)).toBe(true)
    expect(got!.bytes.equals(bytes)).toBe(true)
    const { bytes: _bytes, ...row } = got!
    expect(row).toEqual(created)
  })

  test('an empty photo round-trips too', async () => {
    const owner = unique('owner')
    const created = await store.createPhoto(owner, 'Owner', 'API', 'global', photo(Buffer.alloc(0)))
    const got = await store.getPhoto(owner, created.id)
    expect(got?.bytes.length).toBe(0)
    expect(got?.sha256).toBe(sha256(Buffer.alloc(0)))
  })

  test('getPhoto with another user, an unknown id or a malformed id is null', async () => {
    const owner = unique('owner')
    const created = await store.createPhoto(owner, 'Owner', 'API', 'domestic', photo(randomBytes(100)))
    expect(await store.getPhoto(unique('intruder'), created.id)).toBeNull()
    expect(await store.getPhoto(owner, String(BigInt(created.id) + 1_000_000n))).toBeNull()
    expect(await store.getPhoto(owner, 'abc')).toBeNull()
  })

  test('entry ids are digit strings that increase with every post', async () => {
    const ids: bigint[] = []
    for (let i = 0; i < 20; i++) ids.push(BigInt((await store.createEntry(newEntry(), [], plainBody(`n${i}`))).id))
    for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!)
  })

  test('concurrent posts on shared keywords all succeed with distinct ids', async () => {
    const ids: string[] = []
    for (let round = 0; round < 10; round++) {
      const a = unique('ka')
      const b = unique('kb')
      // Each new keyword is also the other posts' source: the order in which a post
      // creates its words must not let two transactions wait on each other.
      const posts = Array.from({ length: 8 }, (_, i) =>
        store.createEntry(newEntry({ keyword: i % 2 ? a : b, source: i % 2 ? b : a }), [], plainBody(`p${i}`)),
      )
      ids.push(...(await Promise.all(posts)).map((e) => e.id))
    }
    expect(new Set(ids).size).toBe(80)
  })

  test('what was stored is there after closing and reopening the store', async () => {
    const e = await store.createEntry(newEntry(), [], plainBody('kept'))
    const fan = unique('fan')
    await store.addStar(e.id, fan)
    await store.close()
    store = await reopen()
    expect(await store.getEntry(e.id)).toEqual(e)
    expect(await store.hasStar(e.id, fan)).toBe(true)
    const next = await store.createEntry(newEntry(), [], plainBody('after'))
    expect(BigInt(next.id)).toBeGreaterThan(BigInt(e.id))
  })
})

// Several core processes share one PostgreSQL (docs/operations.md#modes, docs/operations.md#stored-data). Each store below has its
// own connection pool, as a separate process would.
const postgres = backends.find((b) => b.name === 'postgres')!

describe.skipIf(postgres.setup === null)('content store on postgres, shared by several processes', () => {
  const opened: StorageBackend[] = []

  afterAll(async () => {
    for (const o of opened) await o.cleanup()
  })

  /** A fresh database and the options every store on it opens with. */
  async function database(): Promise<StorageBackend> {
    const o = await postgres.setup!()
    opened.push(o)
    return o
  }

  it('stores opened at once on a fresh database all migrate, each version once', async () => {
    const where = await database()
    const stores = await Promise.all(Array.from({ length: 4 }, () => openContentStore(where)))
    try {
      const client = new pg.Client({ connectionString: where.databaseUrl })
      await client.connect()
      const { rows } = await client.query<{ version: number; n: string }>(
        'SELECT version, count(*) AS n FROM kigo_core.schema_migrations GROUP BY version ORDER BY version',
      )
      await client.end()
      expect(rows.map((r) => Number(r.version))).toEqual(migrations.map((m) => m.version).sort((x, y) => x - y))
      expect(rows.every((r) => Number(r.n) === 1)).toBe(true)
      for (const s of stores) await expect(s.ping()).resolves.toBeUndefined()
    } finally {
      await Promise.all(stores.map((s) => s.close()))
    }
  })

  it('a store made before the keywords\' suffixes finds its keywords by substring once migrated', async () => {
    const where = await database()
    const db = await openDb(where)
    try {
      await migrate(db, coreSchema, migrations.filter((m) => m.version <= 3))
      await db.query(`INSERT INTO kigo_core.keywords (word) VALUES ('Old Pond'), ('frog'), ('pond life')`)
    } finally {
      await db.close()
    }
    const upgraded = await openContentStore(where)
    try {
      expect((await upgraded.listKeywords('POND', 100, 0)).map((k) => k.word).sort()).toEqual(['Old Pond', 'pond life'])
      await upgraded.createEntry(newEntry({ keyword: 'new pond' }), [], plainBody('after'))
      expect((await upgraded.listKeywords('pond', 100, 0)).map((k) => k.word)).toEqual(['new pond', 'Old Pond', 'pond life'])
    } finally {
      await upgraded.close()
    }
  })

  it('two stores posting concurrently get unique ids, increasing in each', async () => {
    const where = await database()
    const stores = [await openContentStore(where), await openContentStore(where)]
    try {
      const keyword = unique('shared')
      const perStore = await Promise.all(
        stores.map(async (s, n) => {
          const ids: bigint[] = []
          // Four writers per store, each posting in sequence.
          await Promise.all(
            Array.from({ length: 4 }, async (_, w) => {
              const mine: bigint[] = []
              for (let i = 0; i < 15; i++) {
                const e = await s.createEntry(newEntry({ keyword, source: `client-${n}` }), [], plainBody(`s${n}w${w}i${i}`))
                mine.push(BigInt(e.id))
              }
              for (let i = 1; i < mine.length; i++) expect(mine[i]!).toBeGreaterThan(mine[i - 1]!)
              ids.push(...mine)
            }),
          )
          return ids
        }),
      )
      const all = perStore.flat()
      expect(all).toHaveLength(120)
      expect(new Set(all.map(String)).size).toBe(120)
      // A post made after all of them has a greater id than every one, whichever store.
      const last = await stores[0]!.createEntry(newEntry(), [], plainBody('last'))
      expect(all.every((id) => id < BigInt(last.id))).toBe(true)
      // Each store reads what the other wrote.
      expect(await stores[1]!.getEntry(last.id)).toEqual(last)
    } finally {
      await Promise.all(stores.map((s) => s.close()))
    }
  })
})
