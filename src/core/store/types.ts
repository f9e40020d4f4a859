// The core's content repository (SPEC §2, §3). Routes and domain code use this
// interface only; two implementations share one SQL schema (`kigo_core`): embedded
// (PGlite) and PostgreSQL, both through src/common/sql.ts.

export type Deployment = 'domestic' | 'global'

export interface UserRow {
  id: string
  name: string
}

export interface EntryRow {
  /** Digit string, unique and increasing across core processes. */
  id: string
  authorId: string
  authorName: string
  keyword: string
  /** The body as stored, without any `keyword=` prefix. */
  body: string
  source: string
  deployment: Deployment
  inReplyToStatusId: string | null
  inReplyToUserId: string | null
  createdAt: Date
}

export interface NewEntry {
  authorId: string
  /** Display name to record for the author (kept up to date from the identity headers). */
  authorName: string
  keyword: string
  source: string
  deployment: Deployment
  inReplyToStatusId: string | null
}

export interface NewPhoto {
  contentType: string
  /** File extension without the dot: jpg, png, gif, webp. */
  ext: string
  bytes: Buffer
  title: string
  folder: string
}

export interface PhotoRow {
  id: string
  userId: string
  contentType: string
  ext: string
  title: string
  folder: string
  source: string
  deployment: Deployment
  /** Hex SHA-256 of the bytes (the strong ETag). */
  sha256: string
  size: number
  createdAt: Date
}

export interface ContentStore {
  /** Creates or updates the public profile copy of a user. */
  upsertUser(user: UserRow): Promise<void>
  getUser(id: string): Promise<UserRow | null>

  /**
   * Stores an entry in one transaction: the author's profile, the keyword and the source
   * keyword (created when missing), the photos, then the entry whose body is
   * `composeBody(photos)` (the photos in upload order). Throws ReplyTargetNotFound when
   * `inReplyToStatusId` names no live entry.
   */
  createEntry(entry: NewEntry, photos: NewPhoto[], composeBody: (photos: PhotoRow[]) => string): Promise<EntryRow>
  /** A live (not deleted) entry, or null. */
  getEntry(id: string): Promise<EntryRow | null>
  /** The entry and whether `viewer` has starred it, in one round trip (statuses/show). */
  getEntryFor(id: string, viewer: string | null): Promise<{ entry: EntryRow; favorited: boolean } | null>
  /** Deletes an entry and its stars; returns what was deleted, or null when it was not there. */
  deleteEntry(id: string): Promise<EntryRow | null>

  /** Idempotent: true afterwards. Returns false when the entry does not exist. */
  addStar(entryId: string, userId: string): Promise<boolean>
  /** Idempotent: absent afterwards. Returns false when the entry does not exist. */
  removeStar(entryId: string, userId: string): Promise<boolean>
  hasStar(entryId: string, userId: string): Promise<boolean>

  keywordExists(word: string): Promise<boolean>

  /** Stores one photo (the photo service's own posting route). */
  createPhoto(userId: string, userName: string, source: string, deployment: Deployment, photo: NewPhoto): Promise<PhotoRow>
  getPhoto(userId: string, photoId: string): Promise<(PhotoRow & { bytes: Buffer }) | null>

  ping(): Promise<void>
  /** Pool use, for the core's metrics; absent for the embedded engine (one connection). */
  poolStats?(): { total: number; idle: number; waiting: number; max: number } | undefined
  close(): Promise<void>
}

export class ReplyTargetNotFound extends Error {
  override name = 'ReplyTargetNotFound'
}
