// The core's content repository (docs/api.md, docs/operations.md#stored-data). Routes and domain code use this
// interface only; two implementations share one SQL schema (`kigo_core`): embedded
// (PGlite) and PostgreSQL, both through src/common/sql.ts.

import type { ProvisionedUser } from '../../common/user-provisioning.js'
import type { Deployment } from '../../common/deployment.js'

export type { Deployment }

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
  /** The author's followers when the entry was read (docs/api.md#users-and-follows `followers_count`). */
  authorFollowers?: number
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

/** Which entries a timeline lists (docs/api.md#timelines). */
export type TimelineSource =
  | { kind: 'public'; deployment: Deployment }
  | { kind: 'keyword'; word: string }
  | { kind: 'user'; userId: string }
  | { kind: 'friends'; userId: string }
  | { kind: 'album'; word: string | null }

export interface TimelineQuery {
  source: TimelineSource
  count: number
  page: number
  /** Entries created before this are left out. */
  since: Date | null
  /** Entries newer than this ID are left out: the anchor that keeps pages stable. */
  maxId: string | null
  /** `hot`: most stars first, then newest, over entries created at or after `hotSince`. */
  sort: 'new' | 'hot'
  hotSince: Date
}

/** A page of entries with everything their rendering needs, in a constant number of queries. */
export interface EntryPage {
  entries: EntryRow[]
  /** Replies per entry ID, oldest first, at most 100 each. */
  replies: Map<string, EntryRow[]>
  /** IDs (of entries and replies) the viewer has starred. */
  starred: Set<string>
  /** Star counts of the page's entries. */
  stars: Map<string, number>
  /** Followers per author (of entries and replies); absent means 0. */
  followers: Map<string, number>
}

export interface UserWithFollowers extends UserRow {
  followersCount: number
}

export interface KeywordRow {
  word: string
  entryCount: number
  followersCount: number
  related: string[]
}

export interface ContentStore {
  /**
   * Creates the public profile copy of a user seen in a request's identity, or renames one
   * the gateway has not sent (docs/gateway.md#registered-users-in-the-core).
   */
  upsertUser(user: UserRow): Promise<void>
  /** Creates or renames registered users as the gateway sent them: a name of a higher version replaces the copy's. */
  provisionUsers(users: readonly ProvisionedUser[]): Promise<void>
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

  /** One page of a timeline, newest first (or hottest first). */
  timeline(query: TimelineQuery, viewer: string | null): Promise<EntryPage>
  /**
   * sort=hot's order of a source (docs/api.md#timelines): the IDs of its newest
   * `hotCandidates` entries at or after `hotSince` (and `since`, at or below `maxId`), most
   * stars first, then newest. `count` and `page` are not read: a page is a slice of it.
   */
  hotRanking(query: TimelineQuery): Promise<string[]>
  /** The entries `ids` that exist, in that order, with their replies, stars and followers. */
  entriesPage(ids: string[], viewer: string | null): Promise<EntryPage>
  /** Replies, stars and followers of given entries (an entry page, statuses/show). */
  pageOf(entries: EntryRow[], viewer: string | null): Promise<EntryPage>
  /** The replies of one entry (statuses/show) with their stars and followers; `entries` is empty. */
  repliesOf(id: string, viewer: string | null): Promise<EntryPage>

  getUserWithFollowers(id: string): Promise<UserWithFollowers | null>
  /** Idempotent; false when `followee` is unknown. The follower's profile copy is stored. */
  follow(follower: UserRow, followee: string): Promise<boolean>
  unfollow(follower: string, followee: string): Promise<boolean>
  /** Users `userId` follows (`direction` friends) or who follow it (followers), by ID. */
  follows(userId: string, direction: 'friends' | 'followers', limit: number, offset: number): Promise<UserWithFollowers[]>

  getKeyword(word: string): Promise<KeywordRow | null>
  /** Words with most entries since `since`, most first. */
  hotKeywords(since: Date, limit: number): Promise<KeywordRow[]>
  /** Words by entry count, most first, containing `filter` (case-insensitive) when given. */
  listKeywords(filter: string | null, limit: number, offset: number): Promise<KeywordRow[]>
  followedKeywords(userId: string): Promise<KeywordRow[]>
  /** Idempotent; false when the word is unknown. */
  followKeyword(user: UserRow, word: string): Promise<boolean>
  unfollowKeyword(userId: string, word: string): Promise<boolean>
  /** Symmetric and idempotent; false when either word is unknown. */
  relateKeywords(word1: string, word2: string, related: boolean): Promise<boolean>

  ping(): Promise<void>
  /** Pool use, for the core's metrics; absent for the embedded engine (one connection). */
  poolStats?(): { total: number; idle: number; waiting: number; max: number } | undefined
  close(): Promise<void>
}

export class ReplyTargetNotFound extends Error {
  override name = 'ReplyTargetNotFound'
}
