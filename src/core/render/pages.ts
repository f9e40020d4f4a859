// The public pages' HTML (docs/api.md#pages): server-rendered, no script, readable at 390 px.
// Written with `html`, which escapes every value; entry bodies come from the notation
// renderer, which escapes first (docs/api.md#callback-and-body_formats).
import type { Hosts } from '../../common/deployment.js'
import { baseUrl } from '../../common/deployment.js'
import type { Deployment, EntryPage, EntryRow } from '../store/types.js'
import { renderNotation } from './notation.js'
import { entryLink, isPhotoUrl, keywordPageUrl, profileImageUrl, userPageUrl } from './urls.js'
import { html, joinHtml, timeHtml, trusted, type SafeHtml } from '../../common/html.js'
import { siteHeader, sitePage } from '../../common/site-page.js'
import type { PagePolicy } from '../../common/security-headers.js'

/** The same rules as the account pages: nothing but inline style and our own images, no form. */
export const pagePolicy: PagePolicy = { formAction: 'none', images: "'self'", referrer: 'same-origin', cache: 'no-cache' }

/** A page that names its reader: the same, kept by their browser only (RFC 9111 §5.2.2.7). */
export const readerPagePolicy: PagePolicy = { ...pagePolicy, cache: 'private, no-cache' }

export interface PageContext {
  hosts: Hosts
  deployment: Deployment
  /** The signed-in reader, as the gateway named them by their account session; absent for a visitor. */
  reader?: { id: string; name: string }
}

/**
 * The header's right-hand side for a signed-in reader: who they are, their account, and
 * "Sign out", which leads to the account area's sign-out (a page cannot post it: the
 * sign-out form carries the session's CSRF token, which only the account area knows).
 */
function readerHtml(reader: { id: string; name: string }): SafeHtml {
  return html`<div class="who"><span>${reader.name} (${reader.id})</span>
<a href="/account">Your account</a>
<a href="/account/logout">Sign out</a></div>`
}

/** A public page: the header every kigo page has (the timeline, the developer guide, sign-in or the reader), then `content`. */
export function layout(ctx: PageContext, title: string, content: SafeHtml): string {
  const home = baseUrl(ctx.hosts, ctx.deployment)
  const header = siteHeader({ home: `${home}/`, ...(ctx.reader ? { right: readerHtml(ctx.reader) } : {}) })
  return sitePage({ title, header, bodyClass: 'public', body: content })
}

export function entryHtml(entry: EntryRow, page: EntryPage, ctx: PageContext, withReplies: boolean): SafeHtml {
  const notation = { baseUrl: baseUrl(ctx.hosts, entry.deployment), isPhotoUrl: (u: string) => isPhotoUrl(ctx.hosts, u) }
  const stars = page.stars.get(entry.id) ?? 0
  const replies = withReplies ? page.replies.get(entry.id) ?? [] : []
  return html`<article class="entry"><img class="icon" src="${profileImageUrl(ctx.hosts, ctx.deployment, entry.authorId)}" alt="" width="40" height="40">
<div><div class="meta"><a class="author" href="${userPageUrl(ctx.hosts, entry.deployment, entry.authorId)}">${entry.authorName}</a>
 · <a class="keyword" href="${keywordPageUrl(notation.baseUrl, entry.keyword)}">${entry.keyword}</a>
 · <a class="permalink" href="${entryLink(ctx.hosts, entry)}">${timeHtml(entry.createdAt)}</a>
 · <span class="stars">${stars} ${stars === 1 ? 'star' : 'stars'}</span></div>
<div class="body">${trusted(renderNotation(entry.body, 'html', notation))}</div>
${replies.length ? html`<div class="replies">${joinHtml(replies.map((r) => entryHtml(r, page, ctx, false)), '\n')}</div>` : ''}</div></article>`
}

/** The list and its paging links; `max_id` anchors later pages so they do not shift. */
export function entryListHtml(page: EntryPage, ctx: PageContext, pageNo: number, more: boolean, anchor: string | null, path: string): SafeHtml {
  if (page.entries.length === 0) return html`<p>No entries yet.</p>`
  const link = (n: number) => `${path}?page=${n}${anchor ? `&max_id=${anchor}` : ''}`
  const prev = pageNo > 1 ? html`<a rel="prev" href="${link(pageNo - 1)}">Newer</a>` : html`<span></span>`
  const next = more ? html`<a rel="next" href="${link(pageNo + 1)}">Older</a>` : html`<span></span>`
  return html`${joinHtml(page.entries.map((x) => entryHtml(x, page, ctx, true)), '\n')}<nav class="pages">${prev}${next}</nav>`
}
