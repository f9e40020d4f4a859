// Entry, User and Photo objects in JSON and XML (docs/api.md#objects, docs/api.md#photos). The two shapes differ
// only where the spec says so: JSON `in_reply_to_*` are strings or integer 0, XML has an
// empty element for "none". A list inside an object is an array in both: in XML that is
// one element named after the list per item, holding the item's fields, and no element
// for an empty list, as the original service wrote it and its XML clients read it
// (docs/api-differences.md#xml-lists).
import type { XmlObject } from '../../common/formats.js'
import { isoSeconds } from '../../common/time.js'
import { baseUrl, type Hosts } from '../../common/deployment.js'
import { entryText } from '../entries/text.js'
import type { Deployment, EntryPage, EntryRow, PhotoRow } from '../store/types.js'
import type { BodyFormat } from './body-formats.js'
import { renderNotation } from './notation.js'
import { entryLink, isPhotoUrl, photoImageUrl, photoPageUrl, profileImageUrl, userPageUrl } from './urls.js'

export interface RenderContext {
  hosts: Hosts
  /** The deployment the request came to; the icon URL is on its domain. */
  requestDeployment: Deployment
}

export interface Rendition {
  json: Record<string, unknown>
  xml: XmlObject
}

export function userObject(
  user: { id: string; name: string; followersCount?: number },
  ownerDeployment: Deployment,
  ctx: RenderContext,
): Record<string, string | number> {
  return {
    id: user.id,
    name: user.name,
    screen_name: user.id,
    followers_count: user.followersCount ?? 0,
    profile_image_url: profileImageUrl(ctx.hosts, ctx.requestDeployment, user.id),
    url: userPageUrl(ctx.hosts, ownerDeployment, user.id),
  }
}

export function renderEntry(
  entry: EntryRow,
  favorited: boolean,
  bodyFormats: readonly BodyFormat[],
  ctx: RenderContext,
  followersCount = entry.authorFollowers ?? 0,
): Rendition {
  const user = userObject({ id: entry.authorId, name: entry.authorName, followersCount }, entry.deployment, ctx)
  const createdAt = isoSeconds(entry.createdAt)
  const link = entryLink(ctx.hosts, entry)
  const text = entryText(entry)
  const target = targetOf(entry.keyword)
  // Both shapes written out field by field, in the order the bytes show them: object
  // spreads here were the largest part of rendering an entry (every statuses/show).
  const json: Record<string, unknown> = {
    id: entry.id,
    created_at: createdAt,
    favorited: favorited ? 1 : 0,
    in_reply_to_status_id: entry.inReplyToStatusId ?? 0,
    in_reply_to_user_id: entry.inReplyToUserId ?? 0,
    keyword: entry.keyword,
    link,
    source: entry.source,
    target,
    text,
    user,
  }
  const xml: XmlObject = {
    id: entry.id,
    created_at: createdAt,
    favorited: favorited ? 1 : 0,
    in_reply_to_status_id: entry.inReplyToStatusId,
    in_reply_to_user_id: entry.inReplyToUserId,
    keyword: entry.keyword,
    link,
    source: entry.source,
    target,
    text,
    user,
  }
  if (bodyFormats.length > 0) {
    const notation = { baseUrl: baseUrl(ctx.hosts, entry.deployment), isPhotoUrl: (u: string) => isPhotoUrl(ctx.hosts, u) }
    for (const f of bodyFormats) {
      const name = f === 'haiku' ? 'haiku_text' : f
      const value = f === 'haiku' ? entry.body : renderNotation(entry.body, f, notation)
      json[name] = value
      xml[name] = value
    }
  }
  return { json, xml }
}

/**
 * `target`: the keyword an entry was posted to, as the original service gave it (`title`,
 * `word`, and `url_name` for a user keyword `id:X`).
 */
export function targetOf(keyword: string): Record<string, string> {
  const user = keyword.startsWith('id:') && keyword.length > 3 ? keyword.slice(3) : null
  return user === null ? { title: keyword, word: keyword } : { title: keyword, url_name: user, word: keyword }
}

/**
 * A top-level Entry of `page` with its `replies` (docs/api.md#timelines): the entries that reply to it,
 * oldest first, at most 100, each a full Entry without its own. An array in JSON (empty
 * when none); in XML one `replies` element per reply, none when there are none.
 */
export function renderEntryWithReplies(page: EntryPage, e: EntryRow, bodyFormats: readonly BodyFormat[], ctx: RenderContext, favorited = page.starred.has(e.id)): Rendition {
  const one = (r: EntryRow, starred: boolean) => renderEntry(r, starred, bodyFormats, ctx, page.followers.get(r.authorId) ?? 0)
  const top = renderEntry(e, favorited, bodyFormats, ctx, page.followers.get(e.authorId) ?? e.authorFollowers ?? 0)
  const replies = (page.replies.get(e.id) ?? []).map((r) => one(r, page.starred.has(r.id)))
  top.json.replies = replies.map((r) => r.json)
  top.xml.replies = replies.map((r) => r.xml)
  return top
}

/** The entries of a page (docs/api.md#timelines), each with its replies. JSON an array; XML the items of a `<statuses type="array">` root. */
export function renderEntryList(page: EntryPage, bodyFormats: readonly BodyFormat[], ctx: RenderContext): { json: unknown[]; xml: XmlObject } {
  const items = page.entries.map((e) => renderEntryWithReplies(page, e, bodyFormats, ctx))
  return { json: items.map((i) => i.json), xml: listXml('status', items.map((i) => i.xml)) }
}

/** `<{plural} type="array">` content: one `item` element per value (docs/api.md#timelines). */
export function listXml(item: string, values: XmlObject[]): XmlObject {
  return values.length ? { '@_type': 'array', [item]: values } : { '@_type': 'array' }
}

export function renderPhoto(photo: PhotoRow, owner: { id: string; name: string }, ctx: RenderContext): Rendition {
  const value = {
    id: photo.id,
    url: photoPageUrl(ctx.hosts, photo),
    image_url: photoImageUrl(ctx.hosts, photo),
    title: photo.title,
    folder: photo.folder,
    source: photo.source,
    created_at: isoSeconds(photo.createdAt),
    user: userObject(owner, photo.deployment, ctx),
  }
  return { json: value, xml: value }
}
