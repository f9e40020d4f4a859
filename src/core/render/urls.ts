// The public URLs that appear in Entries, Users and Photos (docs/api.md#objects, docs/api.md#photos).
import { baseUrl, type Hosts } from '../../common/deployment.js'
import type { Deployment } from '../store/types.js'

const seg = encodeURIComponent

/** RFC 3986 percent-encoding of one path segment, sub-delimiters included. */
export function encodeSegment(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

export function entryLink(hosts: Hosts, entry: { deployment: Deployment; authorId: string; id: string }): string {
  return `${baseUrl(hosts, entry.deployment)}/${seg(entry.authorId)}/${entry.id}`
}

export function userPageUrl(hosts: Hosts, deployment: Deployment, userId: string): string {
  return `${baseUrl(hosts, deployment)}/${seg(userId)}/`
}

export function profileImageUrl(hosts: Hosts, deployment: Deployment, userId: string): string {
  return `${baseUrl(hosts, deployment)}/users/${seg(userId)}/profile.png`
}

export function keywordPageUrl(base: string, word: string): string {
  return `${base}/keyword/${encodeSegment(word)}`
}

export function photoPageUrl(hosts: Hosts, photo: { deployment: Deployment; userId: string; id: string }): string {
  return `${baseUrl(hosts, photo.deployment)}/photos/${seg(photo.userId)}/${photo.id}`
}

/** The URL that returns the photo's bytes (docs/api.md#statusesupdate rule 6: appended to the body). */
export function photoImageUrl(hosts: Hosts, photo: { deployment: Deployment; userId: string; id: string; ext: string }): string {
  return `${photoPageUrl(hosts, photo)}.${photo.ext}`
}

/** Whether `url` is a photo of this service (either deployment). */
export function isPhotoUrl(hosts: Hosts, url: string): boolean {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return false
  }
  const ours = [hosts.domesticHost, hosts.globalHost].some((h) => `${hosts.publicScheme}://${h}`.toLowerCase() === `${u.protocol}//${u.host}`.toLowerCase())
  return ours && /^\/photos\/[^/]+\/[0-9]+\.(jpg|png|gif|webp)$/.test(u.pathname)
}
