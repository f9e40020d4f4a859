// The public pages' HTML (docs/api.md#pages): server-rendered, no script, readable at 390 px.
// Every value is escaped here; entry bodies come from the notation renderer, which
// escapes first (docs/api.md#callback-and-body_formats).
import type { Hosts } from '../entries/deployment.js'
import { baseUrl } from '../entries/deployment.js'
import type { Deployment, EntryPage, EntryRow } from '../store/types.js'
import e from 'escape-html'
import { renderNotation } from './notation.js'
import { entryLink, isPhotoUrl, keywordPageUrl, profileImageUrl, userPageUrl } from './urls.js'
import { siteHeader, sitePage, timeHtml } from '../../common/site-page.js'

/** The same rules as the account pages: nothing but inline style and our own images. */
export const pageCsp = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

export interface PageContext {
  hosts: Hosts
  deployment: Deployment
}

/** A public page: the header every kigo page has (the timeline, the developer guide, sign-in), then `content`. */
export function layout(ctx: PageContext, title: string, content: string): string {
  const home = baseUrl(ctx.hosts, ctx.deployment)
  return sitePage({ title, header: siteHeader({ home: `${home}/` }), bodyClass: 'public', body: content })
}

export function entryHtml(entry: EntryRow, page: EntryPage, ctx: PageContext, withReplies: boolean): string {
  const notation = { baseUrl: baseUrl(ctx.hosts, entry.deployment), isPhotoUrl: (u: string) => isPhotoUrl(ctx.hosts, u) }
  const stars = page.stars.get(entry.id) ?? 0
  const replies = withReplies ? page.replies.get(entry.id) ?? [] : []
  return `<article class="entry"><img class="icon" src="${e(profileImageUrl(ctx.hosts, ctx.deployment, entry.authorId))}" alt="" width="40" height="40">
<div><div class="meta"><a class="author" href="${e(userPageUrl(ctx.hosts, entry.deployment, entry.authorId))}">${e(entry.authorName)}</a>
 · <a class="keyword" href="${e(keywordPageUrl(notation.baseUrl, entry.keyword))}">${e(entry.keyword)}</a>
 · <a class="permalink" href="${e(entryLink(ctx.hosts, entry))}">${timeHtml(entry.createdAt)}</a>
 · <span class="stars">${stars} ${stars === 1 ? 'star' : 'stars'}</span></div>
<div class="body">${renderNotation(entry.body, 'html', notation)}</div>
${replies.length ? `<div class="replies">${replies.map((r) => entryHtml(r, page, ctx, false)).join('\n')}</div>` : ''}</div></article>`
}

/** The list and its paging links; `max_id` anchors later pages so they do not shift. */
export function entryListHtml(page: EntryPage, ctx: PageContext, pageNo: number, more: boolean, anchor: string | null, path: string): string {
  if (page.entries.length === 0) return '<p>No entries yet.</p>'
  const link = (n: number) => `${path}?page=${n}${anchor ? `&amp;max_id=${anchor}` : ''}`
  const prev = pageNo > 1 ? `<a rel="prev" href="${link(pageNo - 1)}">Newer</a>` : '<span></span>'
  const next = more ? `<a rel="next" href="${link(pageNo + 1)}">Older</a>` : '<span></span>'
  return `${page.entries.map((x) => entryHtml(x, page, ctx, true)).join('\n')}<nav class="pages">${prev}${next}</nav>`
}
