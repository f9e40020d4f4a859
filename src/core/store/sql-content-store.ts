// The content repository over src/common/sql.ts (SPEC §2, §3). One class serves both
// engines: `Db` hides whether PGlite or PostgreSQL answers, and both speak the same SQL.
// IDs are selected as text because the two drivers return int8 differently.
import { createHash } from 'node:crypto'
import type { Db, Queryable } from '../../common/sql.js'
import {
  ReplyTargetNotFound,
  type ContentStore,
  type Deployment,
  type EntryRow,
  type NewEntry,
  type NewPhoto,
  type PhotoRow,
  type UserRow,
} from './types.js'

interface EntryRecord {
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
  e.in_reply_to_status_id::text AS in_reply_to_status_id, e.in_reply_to_user_id, e.created_at`

const entryColumns = entryColumnsWith('u.name')

const photoColumns = `id::text AS id, user_id, content_type, ext, title, folder, source, deployment, sha256, size, created_at`

const maxBigint = 9223372036854775807n

/** An ID the bigint columns can hold; anything else names no row, so callers get null. */
function isRowId(id: string): boolean {
  return /^[0-9]{1,19}$/.test(id) && BigInt(id) <= maxBigint
}

function toEntry(r: EntryRecord): EntryRow {
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
const upsertUserSql = `INSERT INTO kigo_core.users (id, name) VALUES ($1, $2)
     ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, updated = now()
     WHERE kigo_core.users.name IS DISTINCT FROM EXCLUDED.name`

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
  constructor(private readonly db: Db) {}

  async upsertUser(user: UserRow): Promise<void> {
    await upsertUserIn(this.db, user)
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
           INSERT INTO kigo_core.entries (author, keyword, body, source, deployment, in_reply_to_status_id, in_reply_to_user_id)
           VALUES ($1, $2, $3, $4, $5, $6::bigint, $7)
           RETURNING *)
         SELECT ${entryColumns} FROM e JOIN kigo_core.users u ON u.id = e.author`,
        [entry.authorId, entry.keyword, body, entry.source, entry.deployment, entry.inReplyToStatusId, replyAuthor],
      )
      return toEntry(rows[0]!)
    })
  }

  /**
   * The common case, a text entry that replies to nothing, in one statement: the author's
   * profile copy, both keywords (in sorted order, as in createEntry) and the entry. A
   * statement is atomic like the transaction it replaces, which took six round trips.
   * The author's name is the one just stored.
   */
  private async createTextEntry(entry: NewEntry, body: string): Promise<EntryRow> {
    const rows = await this.db.query<EntryRecord>(
      `WITH author AS (${upsertUserSql}),
       words AS (
         INSERT INTO kigo_core.keywords (word)
         SELECT DISTINCT w FROM (VALUES ($3::text), ($4::text)) AS given (w) ORDER BY w
         ON CONFLICT (word) DO NOTHING),
       e AS (
         INSERT INTO kigo_core.entries (author, keyword, body, source, deployment)
         VALUES ($1, $3, $5, $4, $6)
         RETURNING *)
       SELECT ${entryColumnsWith('$2::text')} FROM e`,
      [entry.authorId, entry.authorName, entry.keyword, entry.source, body, entry.deployment],
    )
    return toEntry(rows[0]!)
  }

  async getEntry(id: string): Promise<EntryRow | null> {
    if (!isRowId(id)) return null
    const rows = await this.db.query<EntryRecord>(
      `SELECT ${entryColumns} FROM kigo_core.entries e JOIN kigo_core.users u ON u.id = e.author WHERE e.id = $1::bigint`,
      [id],
    )
    return rows[0] ? toEntry(rows[0]) : null
  }

  async getEntryFor(id: string, viewer: string | null): Promise<{ entry: EntryRow; favorited: boolean } | null> {
    if (viewer === null) {
      const entry = await this.getEntry(id)
      return entry ? { entry, favorited: false } : null
    }
    if (!isRowId(id)) return null
    const rows = await this.db.query<EntryRecord & { favorited: boolean }>(
      `SELECT ${entryColumns}, EXISTS (SELECT 1 FROM kigo_core.stars s WHERE s.entry_id = e.id AND s.user_id = $2) AS favorited
       FROM kigo_core.entries e JOIN kigo_core.users u ON u.id = e.author WHERE e.id = $1::bigint`,
      [id, viewer],
    )
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

  async addStar(entryId: string, userId: string): Promise<boolean> {
    if (!isRowId(entryId)) return false
    try {
      const rows = await this.db.query<{ found: boolean }>(
        `WITH e AS (SELECT id FROM kigo_core.entries WHERE id = $1::bigint),
              s AS (INSERT INTO kigo_core.stars (entry_id, user_id) SELECT id, $2 FROM e ON CONFLICT DO NOTHING)
         SELECT EXISTS (SELECT 1 FROM e) AS found`,
        [entryId, userId],
      )
      return rows[0]?.found === true
    } catch (err) {
      if (isForeignKeyViolation(err)) return false
      throw err
    }
  }

  async removeStar(entryId: string, userId: string): Promise<boolean> {
    if (!isRowId(entryId)) return false
    const rows = await this.db.query<{ found: boolean }>(
      `WITH s AS (DELETE FROM kigo_core.stars WHERE entry_id = $1::bigint AND user_id = $2)
       SELECT EXISTS (SELECT 1 FROM kigo_core.entries WHERE id = $1::bigint) AS found`,
      [entryId, userId],
    )
    return rows[0]?.found === true
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
