// The content repository over src/common/sql.ts (docs/api.md, docs/operations.md#stored-data). One class serves both
// engines: `Db` hides whether PGlite or PostgreSQL answers, and both speak the same SQL.
// IDs are selected as text because the two drivers return int8 differently.
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { planEachCall, type Db, type Queryable } from '../../common/sql.js'
import type { ProvisionedUser } from '../../common/user-provisioning.js'
import {
  ReplyTargetNotFound,
  type ContentStore,
  type Deployment,
  type EntryPage,
  type EntryRow,
  type KeywordRow,
  type NewEntry,
  type NewPhoto,
  type PhotoRow,
  type TimelineQuery,
  type UserRow,
  type UserWithFollowers,
} from './types.js'
import { keywordSuffixChars } from './migrations.js'

export interface EntryRecord {
  id: string
  author: string
  author_name: string
  keyword: string
  body: string
  source: string
  deployment: Deployment
  in_reply_to_status_id: string | null
  in_reply_to_user_id: string | null
  created_at: Date
  author_followers: number
}

interface PhotoRecord {
  id: string
  user_id: string
  content_type: string
  ext: string
  title: string
  folder: string
  source: string
  deployment: Deployment
  sha256: string
  size: number
  created_at: Date
}

/** An entry row's columns from `e`, with the author's name taken from `authorName`. */
const entryColumnsWith = (authorName: string) => `e.id::text AS id, e.author, ${authorName} AS author_name, e.keyword, e.body, e.source, e.deployment,
  e.in_reply_to_status_id::text AS in_reply_to_status_id, e.in_reply_to_user_id, e.created_at,
  (SELECT uf.followers_count FROM kigo_core.users uf WHERE uf.id = e.author) AS author_followers`

const entryColumns = entryColumnsWith('u.name')

/** One entry by ID (statuses/show, anonymous); also the benchmark's anchor's query (bench/anchor.ts). */
export const entryByIdSql = `SELECT ${entryColumns} FROM kigo_core.entries e JOIN kigo_core.users u ON u.id = e.author WHERE e.id = $1::bigint`

/** One entry by ID and whether the viewer starred it (statuses/show, identified; also the floor's, bench/anchor.ts). Made once, not per call. */
/** Replies of the entries `$1` (an array of IDs), oldest first, at most 100 each. */
export const repliesToSql = `SELECT * FROM (
  SELECT ${entryColumns}, row_number() OVER (PARTITION BY e.in_reply_to_status_id ORDER BY e.id) AS n
  FROM kigo_core.entries e JOIN kigo_core.users u ON u.id = e.author
  WHERE e.in_reply_to_status_id = ANY ($1::bigint[])) r
WHERE n <= 100 ORDER BY id::bigint`

export const entryForViewerSql = `SELECT ${entryColumns}, EXISTS (SELECT 1 FROM kigo_core.stars s WHERE s.entry_id = e.id AND s.user_id = $2) AS favorited
       FROM kigo_core.entries e JOIN kigo_core.users u ON u.id = e.author WHERE e.id = $1::bigint`

const photoColumns = `id::text AS id, user_id, content_type, ext, title, folder, source, deployment, sha256, size, created_at`

const maxBigint = 9223372036854775807n

/** sort=hot ranks this many of the source's newest entries in the window (docs/api.md#timelines). */
export const hotCandidates = 1000

/** What the antenna statements need: the followed users (and the user) and keywords, and the newest entry's ID. */
interface Antenna {
  users: string[]
  words: string[]
  newest: string | null
}

const antennaSql = `SELECT ARRAY(SELECT followee FROM kigo_core.user_follows WHERE follower = $1 ORDER BY followee) || $1::text AS users,
         ARRAY(SELECT word FROM kigo_core.keyword_follows WHERE user_id = $1 ORDER BY word) AS words,
         (SELECT max(id)::text FROM kigo_core.entries) AS newest`

/** Rows an antenna walk may still read before the rest is read through the sources' indexes (about 5 ms at L). */
const walkBound = 20_000

/** Knobs a test may turn down to reach a path that real data reaches only at size. */
export interface StoreTuning {
  /**
   * keywords/list?word= ranks a substring's keywords itself while its suffixes number at
   * most this many for the first page (√(depth/100) times this for deeper pages); past it,
   * it walks the keywords by entry count. About √(keywords × page depth) at 10⁶ keywords.
   */
  substringCandidates: number
}

export const defaultTuning: StoreTuning = { substringCandidates: 10_000 }

/** Suffixes (migration 4) that start with the lower-cased `$1`, cut as they are: one range of their key. */
const suffixRange = `s.suffix >= left(lower($1::text), ${keywordSuffixChars}) COLLATE "C"
  AND s.suffix < kigo_core.after_prefix(left(lower($1::text), ${keywordSuffixChars})) COLLATE "C"`

/** Users whose antenna's newest IDs are kept (antennaNewest): 8 KiB each at most. */
const keptAntennas = 512

/** An antenna's newest IDs as last read: up to `hotCandidates`, newest first, for what it followed then. */
interface KeptAntenna {
  /** The followed users and keywords the IDs were read for. */
  sources: string
  /** The newest entry's ID when they were read: IDs above it are read on the next call. */
  top: bigint
  ids: BigInt64Array
  /** True when `ids` holds every entry of the antenna up to `top` (fewer than `hotCandidates`). */
  whole: boolean
}

/**
 * The antenna's newest IDs in ($3, $4], at most $5, written at or after $6 (when given):
 * the primary key walked down, each row checked against $1 (users) and $2 (keywords),
 * which PostgreSQL hashes (hashed SubPlan) whatever their length.
 */
const antennaWalkSql = `SELECT e.id::text AS id FROM kigo_core.entries e
  WHERE e.id > $3::bigint AND e.id <= $4::bigint
    AND (e.author IN (SELECT unnest($1::text[])) OR e.keyword IN (SELECT unnest($2::text[])))
    AND ($6::timestamptz IS NULL OR e.created_at >= $6::timestamptz)
  ORDER BY e.id DESC LIMIT $5`

/** The same IDs in [$3, $4] read through entries_author_id and entries_keyword_id: at most $5 of each source, then the newest $5. */
const antennaBySourceSql = `SELECT id::text AS id FROM (
    SELECT s.id FROM unnest($1::text[]) a(x) CROSS JOIN LATERAL (
      SELECT e.id FROM kigo_core.entries e WHERE e.author = a.x AND e.id >= $3::bigint AND e.id <= $4::bigint
        AND ($6::timestamptz IS NULL OR e.created_at >= $6::timestamptz) ORDER BY e.id DESC LIMIT $5) s
    UNION
    SELECT s.id FROM unnest($2::text[]) a(x) CROSS JOIN LATERAL (
      SELECT e.id FROM kigo_core.entries e WHERE e.keyword = a.x AND e.id >= $3::bigint AND e.id <= $4::bigint
        AND ($6::timestamptz IS NULL OR e.created_at >= $6::timestamptz) ORDER BY e.id DESC LIMIT $5) s
  ) c ORDER BY c.id DESC LIMIT $5`

/** The entries $1 (IDs) that exist, in the order given. */
const entriesByIdsSql = `SELECT ${entryColumns} FROM unnest($1::bigint[]) WITH ORDINALITY AS i(id, n)
  JOIN kigo_core.entries e ON e.id = i.id JOIN kigo_core.users u ON u.id = e.author ORDER BY i.n`

/** The IDs $1 ranked by their stars (in the stars' primary key), then newest: sort=hot's order. */
const rankedByStarsSql = `SELECT c.id::text AS id FROM unnest($1::bigint[]) c(id)
  ORDER BY (SELECT count(*) FROM kigo_core.stars s WHERE s.entry_id = c.id) DESC, c.id DESC`

/**
 * The filter of a source other than the antenna, with `since` and `maxId`: conditions on
 * `e`, their parameters ($1 on), and `p`, which adds a parameter and names its placeholder.
 */
function sourceFilter(q: TimelineQuery): { where: string[]; params: unknown[]; p: (v: unknown) => string } {
  const params: unknown[] = []
  const p = (v: unknown) => {
    params.push(v)
    return `$${params.length}`
  }
  const where: string[] = []
  const src = q.source
  if (src.kind === 'public') where.push(`e.deployment = ${p(src.deployment)}`, `e.keyword NOT LIKE 'id:%'`)
  else if (src.kind === 'keyword') where.push(`e.keyword = ${p(src.word)}`)
  else if (src.kind === 'user') where.push(`e.author = ${p(src.userId)}`)
  else if (src.kind === 'friends') throw new Error('the antenna has statements of its own')
  else {
    where.push('e.has_photos')
    if (src.word !== null) where.push(`e.keyword = ${p(src.word)}`)
  }
  if (q.since) where.push(`e.created_at >= ${p(q.since)}`)
  if (q.maxId !== null) where.push(`e.id <= ${p(q.maxId)}::bigint`)
  return { where, params, p }
}

/** An ID the bigint columns can hold; anything else names no row, so callers get null. */
function isRowId(id: string): boolean {
  return /^[0-9]{1,19}$/.test(id) && BigInt(id) <= maxBigint
}


function toUser(r: { id: string; name: string; followers_count: number }): UserWithFollowers {
  return { id: r.id, name: r.name, followersCount: Number(r.followers_count) }
}

interface KeywordRecord {
  word: string
  entry_count: number
  followers_count: number
  related: string[]
}

/** A Keyword's columns from `k`, a row of kigo_core.keywords (its counts are kept by triggers, migrations.ts). */
const keywordColumns = `k.word, k.entry_count, k.followers_count,
  ARRAY(SELECT r.word2 FROM kigo_core.keyword_relations r WHERE r.word1 = k.word ORDER BY r.word2) AS related`

function toKeyword(r: KeywordRecord): KeywordRow {
  return { word: r.word, entryCount: Number(r.entry_count), followersCount: Number(r.followers_count), related: r.related ?? [] }
}

export function toEntry(r: EntryRecord): EntryRow {
  return {
    id: r.id,
    authorId: r.author,
    authorName: r.author_name,
    keyword: r.keyword,
    body: r.body,
    source: r.source,
    deployment: r.deployment,
    inReplyToStatusId: r.in_reply_to_status_id,
    inReplyToUserId: r.in_reply_to_user_id,
    createdAt: new Date(r.created_at),
    authorFollowers: Number(r.author_followers ?? 0),
  }
}

function toPhoto(r: PhotoRecord): PhotoRow {
  return {
    id: r.id,
    userId: r.user_id,
    contentType: r.content_type,
    ext: r.ext,
    title: r.title,
    folder: r.folder,
    source: r.source,
    deployment: r.deployment,
    sha256: r.sha256,
    size: Number(r.size),
    createdAt: new Date(r.created_at),
  }
}

/** pg returns bytea as a Buffer, PGlite as a Uint8Array. */
function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** A foreign-key violation: the entry went away between our read and our write. */
function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: unknown }).code === '23503'
}

/**
 * Stores the profile copy of user $1 with name $2. The WHERE keeps an unchanged name from
 * rewriting the row on every post. Also a step of createTextEntry's statement.
 */
// A request's identity makes a missing copy, and names it while the gateway has not sent
// the user (name_version 0); once it has, the name is the one the gateway sent
// (docs/gateway.md#registered-users-in-the-core): an identity a gateway cached before a
// rename cannot bring the old name back.
const upsertUserSql = `INSERT INTO kigo_core.users (id, name) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, updated = now()
     WHERE kigo_core.users.name_version = 0 AND kigo_core.users.name IS DISTINCT FROM EXCLUDED.name`

// Registered users as the gateway sends them: a copy takes the name of a higher version only.
const provisionUsersSql = `INSERT INTO kigo_core.users (id, name, name_version)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
     ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, name_version = EXCLUDED.name_version, updated = now()
     WHERE kigo_core.users.name_version < EXCLUDED.name_version`

async function upsertUserIn(q: Queryable, user: UserRow): Promise<void> {
  await q.query(upsertUserSql, [user.id, user.name])
}

async function insertPhotoIn(q: Queryable, userId: string, source: string, deployment: Deployment, photo: NewPhoto): Promise<PhotoRow> {
  const sha256 = createHash('sha256').update(photo.bytes).digest('hex')
  const rows = await q.query<PhotoRecord>(
    `INSERT INTO kigo_core.photos (user_id, content_type, ext, title, folder, source, deployment, sha256, size, bytes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::bytea)
     RETURNING ${photoColumns}`,
    [userId, photo.contentType, photo.ext, photo.title, photo.folder, source, deployment, sha256, photo.bytes.length, photo.bytes],
  )
  return toPhoto(rows[0]!)
}

export class SqlContentStore implements ContentStore {
  /**
   * Each user's antenna's newest IDs, read again only above the newest entry seen: a
   * follower paging through the antenna walks the primary key once, and after that only
   * over the entries written since. Keyed by what the user follows, so a follow or an
   * unfollow (through any process) reads it anew; a page that finds one of its entries
   * deleted reads it anew too.
   */
  private readonly antennas = new LRUCache<string, KeptAntenna>({ max: keptAntennas })

  constructor(
    private readonly db: Db,
    private readonly tuning: StoreTuning = defaultTuning,
  ) {}

  async upsertUser(user: UserRow): Promise<void> {
    await upsertUserIn(this.db, user)
  }

  async provisionUsers(users: readonly ProvisionedUser[]): Promise<void> {
    if (users.length === 0) return
    await this.db.query(provisionUsersSql, [users.map((u) => u.id), users.map((u) => u.name), users.map((u) => String(u.version))])
  }

  async getUser(id: string): Promise<UserRow | null> {
    const rows = await this.db.query<UserRow>('SELECT id, name FROM kigo_core.users WHERE id = $1', [id])
    return rows[0] ?? null
  }

  async createEntry(entry: NewEntry, photos: NewPhoto[], composeBody: (photos: PhotoRow[]) => string): Promise<EntryRow> {
    if (entry.inReplyToStatusId === null && photos.length === 0) return this.createTextEntry(entry, composeBody([]))
    return this.db.transaction(async (tx) => {
      let replyAuthor: string | null = null
      if (entry.inReplyToStatusId !== null) {
        const id = entry.inReplyToStatusId
        const target = isRowId(id)
          ? await tx.query<{ author: string }>('SELECT author FROM kigo_core.entries WHERE id = $1::bigint', [id])
          : []
        if (!target[0]) throw new ReplyTargetNotFound(`no entry ${id} to reply to`)
        replyAuthor = target[0].author
      }
      await upsertUserIn(tx, { id: entry.authorId, name: entry.authorName })
      // Keywords are inserted in sorted order so that concurrent posts naming the same
      // two words (as keyword and as source, either way round) cannot deadlock.
      for (const word of [...new Set([entry.keyword, entry.source])].sort()) {
        await tx.query('INSERT INTO kigo_core.keywords (word) VALUES ($1) ON CONFLICT (word) DO NOTHING', [word])
      }
      const stored: PhotoRow[] = []
      for (const photo of photos) stored.push(await insertPhotoIn(tx, entry.authorId, entry.source, entry.deployment, photo))
      const body = composeBody(stored)
      // The row is read back as stored, so the caller renders exactly what was kept.
      const rows = await tx.query<EntryRecord>(
        `WITH e AS (
           INSERT INTO kigo_core.entries (author, keyword, body, source, deployment, in_reply_to_status_id, in_reply_to_user_id, has_photos)
           VALUES ($1, $2, $3, $4, $5, $6::bigint, $7, $8)
           RETURNING *)
         SELECT ${entryColumns} FROM e JOIN kigo_core.users u ON u.id = e.author`,
        [entry.authorId, entry.keyword, body, entry.source, entry.deployment, entry.inReplyToStatusId, replyAuthor, stored.length > 0],
      )
      return toEntry(rows[0]!)
    })
  }

  /**
   * The common case, a text entry that replies to nothing, in one statement: the author's
   * profile copy, both keywords (in sorted order, as in createEntry) and the entry. A
   * statement is atomic like the transaction it replaces, which took six round trips.
   * The author's name is the one the profile copy holds: the one just stored, or the
   * gateway's when it keeps the copy's (upsertUserSql; the statement's snapshot is read
   * only then).
   */
  private async createTextEntry(entry: NewEntry, body: string): Promise<EntryRow> {
    const rows = await this.db.query<EntryRecord>(
      `WITH author AS (${upsertUserSql} RETURNING name),
       words AS (
         INSERT INTO kigo_core.keywords (word)
         SELECT DISTINCT w FROM (VALUES ($3::text), ($4::text)) AS given (w) ORDER BY w
         ON CONFLICT (word) DO NOTHING),
       e AS (
         INSERT INTO kigo_core.entries (author, keyword, body, source, deployment)
         VALUES ($1, $3, $5, $4, $6)
         RETURNING *)
       SELECT ${entryColumnsWith('COALESCE((SELECT name FROM author), (SELECT name FROM kigo_core.users WHERE id = $1))')} FROM e`,
      [entry.authorId, entry.authorName, entry.keyword, entry.source, body, entry.deployment],
    )
    return toEntry(rows[0]!)
  }

  async getEntry(id: string): Promise<EntryRow | null> {
    if (!isRowId(id)) return null
    const rows = await this.db.query<EntryRecord>(entryByIdSql, [id])
    return rows[0] ? toEntry(rows[0]) : null
  }

  async getEntryFor(id: string, viewer: string | null): Promise<{ entry: EntryRow; favorited: boolean } | null> {
    if (viewer === null) {
      const entry = await this.getEntry(id)
      return entry ? { entry, favorited: false } : null
    }
    if (!isRowId(id)) return null
    const rows = await this.db.query<EntryRecord & { favorited: boolean }>(entryForViewerSql, [id, viewer])
    const row = rows[0]
    return row ? { entry: toEntry(row), favorited: row.favorited === true } : null
  }

  async deleteEntry(id: string): Promise<EntryRow | null> {
    if (!isRowId(id)) return null
    // Stars go with the entry (ON DELETE CASCADE); replies keep in_reply_to_status_id.
    const rows = await this.db.query<EntryRecord>(
      `WITH e AS (DELETE FROM kigo_core.entries WHERE id = $1::bigint RETURNING *)
       SELECT ${entryColumns} FROM e JOIN kigo_core.users u ON u.id = e.author`,
      [id],
    )
    return rows[0] ? toEntry(rows[0]) : null
  }

  /**
   * Runs a change whose statement ends `SELECT EXISTS (…) AS found`: whether the thing it
   * is about (the entry, user or keyword) exists, the answer of every idempotent change.
   */
  private async found(sql: string, params: unknown[]): Promise<boolean> {
    const rows = await this.db.query<{ found: boolean }>(sql, params)
    return rows[0]?.found === true
  }

  async addStar(entryId: string, userId: string): Promise<boolean> {
    if (!isRowId(entryId)) return false
    try {
      // Awaited here, so that a foreign-key violation (the user row gone meanwhile) is caught below.
      return await this.found(
        `WITH e AS (SELECT id FROM kigo_core.entries WHERE id = $1::bigint),
              s AS (INSERT INTO kigo_core.stars (entry_id, user_id) SELECT id, $2 FROM e ON CONFLICT DO NOTHING)
         SELECT EXISTS (SELECT 1 FROM e) AS found`,
        [entryId, userId],
      )
    } catch (err) {
      if (isForeignKeyViolation(err)) return false
      throw err
    }
  }

  async removeStar(entryId: string, userId: string): Promise<boolean> {
    if (!isRowId(entryId)) return false
    return this.found(
      `WITH s AS (DELETE FROM kigo_core.stars WHERE entry_id = $1::bigint AND user_id = $2)
       SELECT EXISTS (SELECT 1 FROM kigo_core.entries WHERE id = $1::bigint) AS found`,
      [entryId, userId],
    )
  }

  async hasStar(entryId: string, userId: string): Promise<boolean> {
    if (!isRowId(entryId)) return false
    const rows = await this.db.query('SELECT 1 FROM kigo_core.stars WHERE entry_id = $1::bigint AND user_id = $2', [entryId, userId])
    return rows.length > 0
  }

  async keywordExists(word: string): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM kigo_core.keywords WHERE word = $1', [word])
    return rows.length > 0
  }

  async createPhoto(userId: string, userName: string, source: string, deployment: Deployment, photo: NewPhoto): Promise<PhotoRow> {
    return this.db.transaction(async (tx) => {
      await upsertUserIn(tx, { id: userId, name: userName })
      return insertPhotoIn(tx, userId, source, deployment, photo)
    })
  }

  async getPhoto(userId: string, photoId: string): Promise<(PhotoRow & { bytes: Buffer }) | null> {
    if (!isRowId(photoId)) return null
    const rows = await this.db.query<PhotoRecord & { bytes: Uint8Array }>(
      `SELECT ${photoColumns}, bytes FROM kigo_core.photos WHERE id = $1::bigint AND user_id = $2`,
      [photoId, userId],
    )
    const row = rows[0]
    return row ? { ...toPhoto(row), bytes: toBuffer(row.bytes) } : null
  }

  // ---- timelines (docs/api.md#timelines)

  /**
   * One statement per page (one more for sort=hot, which finds where the window starts; the
   * antenna has its own, antennaTimeline). The page's IDs come first, from the source's own
   * index alone (entries_public, a partial index whose predicate the query repeats;
   * entries_keyword_id; entries_author_id; the album's partial indexes), so page 50 reads a
   * thousand index entries and twenty rows, not a thousand rows; then the twenty entries
   * are read by ID. The offset is bounded by page ≤ 100 and count ≤ 200.
   */
  async timeline(q: TimelineQuery, viewer: string | null): Promise<EntryPage> {
    if (q.sort === 'hot') {
      const offset = (q.page - 1) * q.count
      return this.entriesPage((await this.hotRanking(q)).slice(offset, offset + q.count), viewer)
    }
    if (q.source.kind === 'friends') return this.antennaTimeline(q.source.userId, q, viewer)
    const { where, params, p } = sourceFilter(q)
    const sql = `${planEachCall}WITH r AS MATERIALIZED (
         SELECT e.id FROM kigo_core.entries e WHERE ${where.join(' AND ')} ORDER BY e.id DESC LIMIT ${p(q.count)} OFFSET ${p((q.page - 1) * q.count)})
       SELECT ${entryColumns} FROM r JOIN kigo_core.entries e ON e.id = r.id JOIN kigo_core.users u ON u.id = e.author
       ORDER BY e.id DESC`
    const rows = await this.db.query<EntryRecord>(sql, params)
    return this.pageOf(rows.map(toEntry), viewer)
  }

  /**
   * The antenna (docs/api.md#timelines): entries by the users and on the keywords the user
   * follows, and the user's own. Its newest IDs are found first (antennaIds), then the
   * page's entries by ID, or for sort=hot the candidates ranked by their stars. Every
   * statement here has one plan whatever the user follows, so none is planned per call: a
   * thousand followed users as constants cost PostgreSQL about 3 ms of planning, more than
   * the page itself (docs/performance.md#what-keeps-the-cost-flat).
   */
  private async antennaTimeline(userId: string, q: TimelineQuery, viewer: string | null): Promise<EntryPage> {
    const offset = (q.page - 1) * q.count
    const ids = (await this.antennaNewest(userId, q, q.since, q.page * q.count)).slice(offset, offset + q.count)
    const page = await this.entriesPage(ids, viewer)
    if (page.entries.length === ids.length) return page
    // An entry of the kept IDs was deleted meanwhile: read the antenna anew.
    this.antennas.delete(userId)
    return this.entriesPage((await this.antennaNewest(userId, q, q.since, q.page * q.count)).slice(offset, offset + q.count), viewer)
  }

  /**
   * The antenna's newest `needed` IDs written at or after `from` and at or below `q.maxId`,
   * newest first: from the kept IDs (keptAntenna) when they reach that far, else read.
   */
  private async antennaNewest(userId: string, q: TimelineQuery, from: Date | null, needed: number): Promise<string[]> {
    const [antenna, floorId] = await Promise.all([this.antennaOf(userId), from === null ? null : this.windowStart(from)])
    if (antenna.newest === null || (from !== null && floorId === null)) return []
    const newest = BigInt(antenna.newest)
    const top = q.maxId !== null && BigInt(q.maxId) < newest ? BigInt(q.maxId) : newest
    const floor = floorId === null ? 0n : BigInt(floorId)
    // `since` filters by time, which the kept IDs do not know; every other query can use them.
    if (q.since === null && needed <= hotCandidates) {
      const kept = await this.keptAntenna(userId, antenna, newest)
      const out: string[] = []
      for (const id of kept.ids) {
        if (id > top) continue
        if (id < floor || out.length === needed) break
        out.push(String(id))
      }
      const last = kept.ids.length === 0 ? null : kept.ids[kept.ids.length - 1]!
      if (out.length === needed || kept.whole || (last !== null && last <= floor)) return out
    }
    return this.antennaIds(antenna, top, floor, q.since, needed)
  }

  /** The user's kept antenna IDs, brought up to `newest` (read whole when none are kept for what the user follows now). */
  private async keptAntenna(userId: string, antenna: Antenna, newest: bigint): Promise<KeptAntenna> {
    const sources = `${antenna.users.join('\n')}\0${antenna.words.join('\n')}`
    const before = this.antennas.get(userId)
    let kept: KeptAntenna
    if (before !== undefined && before.sources === sources) {
      if (before.top >= newest) return before
      const added = await this.antennaIds(antenna, newest, before.top + 1n, null, hotCandidates)
      const ids = new BigInt64Array(Math.min(hotCandidates, added.length + before.ids.length))
      ids.set(added.slice(0, ids.length).map(BigInt))
      if (added.length < ids.length) ids.set(before.ids.subarray(0, ids.length - added.length), added.length)
      kept = { sources, top: newest, ids, whole: before.whole && ids.length < hotCandidates }
    } else {
      const ids = await this.antennaIds(antenna, newest, 0n, null, hotCandidates)
      kept = { sources, top: newest, ids: BigInt64Array.from(ids, BigInt), whole: ids.length < hotCandidates }
    }
    this.antennas.set(userId, kept)
    return kept
  }

  async hotRanking(q: TimelineQuery): Promise<string[]> {
    // docs/api.md#timelines: the source's newest `hotCandidates` entries of the window, most
    // stars first. The window starts at its first entry's ID, so the source's index is read
    // from its newest entry down to at most that many, and stars are counted (in the stars'
    // primary key) for those only, however long the window is.
    const from = q.since !== null && q.since > q.hotSince ? q.since : q.hotSince
    if (q.source.kind === 'friends') {
      const ids = await this.antennaNewest(q.source.userId, q, from, hotCandidates)
      return (await this.db.query<{ id: string }>(rankedByStarsSql, [ids])).map((r) => r.id)
    }
    const start = await this.windowStart(from)
    if (start === null) return []
    const { where, params, p } = sourceFilter(q)
    where.push(`e.id >= ${p(start)}::bigint`)
    const rows = await this.db.query<{ id: string }>(
      `${planEachCall}WITH c AS MATERIALIZED (
         SELECT e.id FROM kigo_core.entries e WHERE ${where.join(' AND ')} ORDER BY e.id DESC LIMIT ${hotCandidates})
       SELECT c.id::text AS id FROM c ORDER BY (SELECT count(*) FROM kigo_core.stars s WHERE s.entry_id = c.id) DESC, c.id DESC`,
      params,
    )
    return rows.map((r) => r.id)
  }

  async entriesPage(ids: string[], viewer: string | null): Promise<EntryPage> {
    if (ids.length === 0) return this.pageOf([], viewer)
    const rows = await this.db.query<EntryRecord>(entriesByIdsSql, [ids])
    return this.pageOf(rows.map(toEntry), viewer)
  }

  /** Whom and what the user follows (and the user), and the newest entry's ID: one statement. */
  private async antennaOf(userId: string): Promise<Antenna> {
    const rows = await this.db.query<Antenna>(antennaSql, [userId])
    return rows[0] ?? { users: [userId], words: [], newest: null }
  }

  /**
   * The antenna's newest `needed` IDs from `top` down to `floor`, newest first. First a walk
   * down the primary key over 16 × `needed` IDs, each row checked against the followed users
   * and keywords hashed: a heavy follower's antenna (one entry in twelve at every size of
   * the benchmark) is found in one walk. While more are needed, the walk goes on over as
   * many IDs as the density seen so far says the rest needs, as long as that is at most
   * `walkBound` rows; past it, the antenna is sparse, and the rest is read through the
   * author and keyword indexes, at most `needed` entries of each followed source.
   */
  private async antennaIds(antenna: Antenna, top: bigint, floor: bigint, from: Date | null, needed: number): Promise<string[]> {
    const found: string[] = []
    let span = BigInt(needed) * 16n
    let walked = 0n
    for (;;) {
      const bottom = top - span < floor - 1n ? floor - 1n : top - span
      const rows = await this.db.query<{ id: string }>(antennaWalkSql, [antenna.users, antenna.words, bottom.toString(), top.toString(), needed - found.length, from])
      for (const r of rows) found.push(r.id)
      walked += top - bottom
      if (found.length >= needed || bottom < floor) return found
      top = bottom
      const rest = needed - found.length
      const projected = found.length === 0 ? Infinity : (rest * Number(walked)) / found.length
      if (projected > walkBound) {
        const more = await this.db.query<{ id: string }>(antennaBySourceSql, [antenna.users, antenna.words, floor.toString(), top.toString(), rest, from])
        for (const r of more) found.push(r.id)
        return found
      }
      span = BigInt(Math.ceil(projected * 1.25))
    }
  }

  /** The ID of the first entry written at or after `since` (entries_created_at), or null when none was. */
  private async windowStart(since: Date): Promise<string | null> {
    const rows = await this.db.query<{ id: string }>(
      'SELECT e.id::text AS id FROM kigo_core.entries e WHERE e.created_at >= $1 ORDER BY e.created_at LIMIT 1',
      [since],
    )
    return rows[0]?.id ?? null
  }

  /** Replies of the entries `ids`, oldest first, at most 100 each. */
  private async repliesTo(ids: string[]): Promise<EntryRow[]> {
    const replyRows = await this.db.query<EntryRecord>(repliesToSql, [ids])
    return replyRows.map(toEntry)
  }

  /** Three more queries whatever the page's size: replies, stars, followers. */
  async pageOf(entries: EntryRow[], viewer: string | null): Promise<EntryPage> {
    const page: EntryPage = { entries, replies: new Map(), starred: new Set(), stars: new Map(), followers: new Map() }
    if (entries.length === 0) return page
    const replies = await this.repliesTo(entries.map((e) => e.id))
    await this.fillPage(page, replies, viewer)
    return page
  }

  /** One query when the entry has no replies (the usual statuses/show), three when it has. */
  async repliesOf(id: string, viewer: string | null): Promise<EntryPage> {
    const page: EntryPage = { entries: [], replies: new Map(), starred: new Set(), stars: new Map(), followers: new Map() }
    if (!isRowId(id)) return page
    const replies = await this.repliesTo([id])
    if (replies.length > 0) await this.fillPage(page, replies, viewer)
    return page
  }

  /** `replies` filed by the entry they reply to, and the stars and followers of the page's entries and replies. */
  private async fillPage(page: EntryPage, replies: EntryRow[], viewer: string | null): Promise<void> {
    for (const r of replies) {
      const list = page.replies.get(r.inReplyToStatusId!) ?? []
      list.push(r)
      page.replies.set(r.inReplyToStatusId!, list)
    }
    const all = [...page.entries, ...replies]
    const [stars, followers] = await Promise.all([
      this.db.query<{ id: string; n: number; mine: boolean }>(
        `SELECT entry_id::text AS id, count(*)::int AS n, coalesce(bool_or(user_id = $2), false) AS mine
         FROM kigo_core.stars WHERE entry_id = ANY ($1::bigint[]) GROUP BY entry_id`,
        [all.map((e) => e.id), viewer],
      ),
      this.db.query<{ id: string; n: number }>(
        'SELECT id, followers_count AS n FROM kigo_core.users WHERE id = ANY ($1::text[])',
        [[...new Set(all.map((e) => e.authorId))]],
      ),
    ])
    for (const s of stars) {
      page.stars.set(s.id, Number(s.n))
      if (s.mine === true) page.starred.add(s.id)
    }
    for (const f of followers) page.followers.set(f.id, Number(f.n))
  }

  // ---- users and follows (docs/api.md#users-and-follows)

  async getUserWithFollowers(id: string): Promise<UserWithFollowers | null> {
    const rows = await this.db.query<{ id: string; name: string; followers_count: number }>(
      'SELECT u.id, u.name, u.followers_count FROM kigo_core.users u WHERE u.id = $1',
      [id],
    )
    return rows[0] ? toUser(rows[0]) : null
  }

  async follow(follower: UserRow, followee: string): Promise<boolean> {
    // One statement, like createTextEntry: the follower's profile copy, then the follow.
    return this.found(
      `WITH me AS (${upsertUserSql}),
       t AS (SELECT id FROM kigo_core.users WHERE id = $3),
       f AS (INSERT INTO kigo_core.user_follows (follower, followee) SELECT $1, id FROM t ON CONFLICT DO NOTHING)
       SELECT EXISTS (SELECT 1 FROM t) AS found`,
      [follower.id, follower.name, followee],
    )
  }

  async unfollow(follower: string, followee: string): Promise<boolean> {
    return this.found(
      `WITH d AS (DELETE FROM kigo_core.user_follows WHERE follower = $1 AND followee = $2)
       SELECT EXISTS (SELECT 1 FROM kigo_core.users WHERE id = $2) AS found`,
      [follower, followee],
    )
  }

  async follows(userId: string, direction: 'friends' | 'followers', limit: number, offset: number): Promise<UserWithFollowers[]> {
    const [mine, other] = direction === 'friends' ? ['follower', 'followee'] : ['followee', 'follower']
    const rows = await this.db.query<{ id: string; name: string; followers_count: number }>(
      `SELECT u.id, u.name, u.followers_count
       FROM kigo_core.user_follows f JOIN kigo_core.users u ON u.id = f.${other}
       WHERE f.${mine} = $1 ORDER BY f.created DESC, u.id LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    )
    return rows.map(toUser)
  }

  // ---- keywords (docs/api.md#keywords)

  async getKeyword(word: string): Promise<KeywordRow | null> {
    const rows = await this.db.query<KeywordRecord>(`SELECT ${keywordColumns} FROM kigo_core.keywords k WHERE k.word = $1`, [word])
    return rows[0] ? toKeyword(rows[0]) : null
  }

  async hotKeywords(since: Date, limit: number): Promise<KeywordRow[]> {
    // User keywords are people's own pages, not topics: left out, as on the public timeline.
    const rows = await this.db.query<KeywordRecord>(
      `SELECT ${keywordColumns} FROM (
         SELECT e.keyword AS word, count(*) AS recent FROM kigo_core.entries e
         WHERE e.created_at >= $1 AND e.keyword NOT LIKE 'id:%' GROUP BY e.keyword
         ORDER BY recent DESC, e.keyword LIMIT $2) h JOIN kigo_core.keywords k ON k.word = h.word
       ORDER BY h.recent DESC, k.word`,
      [since, limit],
    )
    return rows.map(toKeyword)
  }

  async listKeywords(filter: string | null, limit: number, offset: number): Promise<KeywordRow[]> {
    if (filter === null) {
      const rows = await this.db.query<KeywordRecord>(`SELECT ${keywordColumns} FROM kigo_core.keywords k ORDER BY k.entry_count DESC, k.word LIMIT $1 OFFSET $2`, [limit, offset])
      return rows.map(toKeyword)
    }
    // docs/performance.md#keyword-search: the suffixes that start with the substring are
    // counted up to a bound that grows with the page's depth. Below it, the keywords they
    // name are ranked; above it, the substring is common enough that walking the keywords
    // by entry count finds the page soon. Either costs about the bound at most, whatever
    // the number of keywords. The LIKE keeps a substring longer than a kept suffix exact.
    const pattern = `%${filter.replace(/[\\%_]/g, '\\$&')}%`
    const depth = offset + limit
    const bound = Math.ceil(this.tuning.substringCandidates * Math.sqrt(depth / 100))
    const ranked = async () =>
      (
        await this.db.query<KeywordRecord>(
          `${planEachCall}SELECT ${keywordColumns} FROM kigo_core.keywords k
           WHERE k.word IN (SELECT s.word FROM kigo_core.keyword_suffixes s WHERE ${suffixRange}) AND lower(k.word) LIKE lower($2)
           ORDER BY k.entry_count DESC, k.word LIMIT $3 OFFSET $4`,
          [filter, pattern, limit, offset],
        )
      ).map(toKeyword)
    const [counted] = await this.db.query<{ n: number }>(
      `${planEachCall}SELECT count(*)::int AS n FROM (SELECT 1 FROM kigo_core.keyword_suffixes s WHERE ${suffixRange} LIMIT $2) x`,
      [filter, bound + 1],
    )
    if (counted!.n <= bound) return ranked()
    // Common: the walk grows fourfold until it holds the page or has read every keyword,
    // to 4 × the bound at most. Past that, the matches rank low; they are ranked themselves.
    for (let walk = depth * 16; walk <= Math.max(bound * 4, depth * 16); walk *= 4) {
      const rows = await this.db.query<KeywordRecord & { walked: number }>(
        `${planEachCall}WITH w AS MATERIALIZED (SELECT k.word, k.entry_count FROM kigo_core.keywords k ORDER BY k.entry_count DESC, k.word LIMIT $1)
         SELECT m.*, c.walked FROM (SELECT count(*)::int AS walked FROM w) c LEFT JOIN LATERAL (
           SELECT ${keywordColumns} FROM w JOIN kigo_core.keywords k ON k.word = w.word
           WHERE lower(w.word) LIKE lower($2) ORDER BY w.entry_count DESC, w.word LIMIT $3 OFFSET $4) m ON true`,
        [walk, pattern, limit, offset],
      )
      const found = rows.filter((r) => r.word !== null)
      if (found.length === limit || rows[0]!.walked < walk) return found.map(toKeyword)
    }
    return ranked()
  }

  async followedKeywords(userId: string): Promise<KeywordRow[]> {
    const rows = await this.db.query<KeywordRecord>(
      `SELECT ${keywordColumns} FROM kigo_core.keyword_follows f JOIN kigo_core.keywords k ON k.word = f.word
       WHERE f.user_id = $1 ORDER BY f.created DESC, k.word`,
      [userId],
    )
    return rows.map(toKeyword)
  }

  async followKeyword(user: UserRow, word: string): Promise<boolean> {
    return this.found(
      `WITH me AS (${upsertUserSql}),
       k AS (SELECT word FROM kigo_core.keywords WHERE word = $3),
       f AS (INSERT INTO kigo_core.keyword_follows (user_id, word) SELECT $1, word FROM k ON CONFLICT DO NOTHING)
       SELECT EXISTS (SELECT 1 FROM k) AS found`,
      [user.id, user.name, word],
    )
  }

  async unfollowKeyword(userId: string, word: string): Promise<boolean> {
    return this.found(
      `WITH d AS (DELETE FROM kigo_core.keyword_follows WHERE user_id = $1 AND word = $2)
       SELECT EXISTS (SELECT 1 FROM kigo_core.keywords WHERE word = $2) AS found`,
      [userId, word],
    )
  }

  async relateKeywords(word1: string, word2: string, related: boolean): Promise<boolean> {
    const found = await this.db.query('SELECT 1 FROM kigo_core.keywords WHERE word = $1 OR word = $2', [word1, word2])
    if (found.length < (word1 === word2 ? 1 : 2)) return false
    if (related) {
      await this.db.query(
        `INSERT INTO kigo_core.keyword_relations (word1, word2) VALUES ($1, $2), ($2, $1) ON CONFLICT DO NOTHING`,
        [word1, word2],
      )
    } else {
      await this.db.query(
        'DELETE FROM kigo_core.keyword_relations WHERE (word1 = $1 AND word2 = $2) OR (word1 = $2 AND word2 = $1)',
        [word1, word2],
      )
    }
    return true
  }

  poolStats() {
    return this.db.poolStats?.()
  }

  async ping(): Promise<void> {
    await this.db.ping()
  }

  async close(): Promise<void> {
    await this.db.close()
  }
}
