// The public pages (docs/api.md#pages): `/`, `/{id}/`, `/{id}/{eid}`, `/keyword/{word}`, the
// pages behind every `link` and `url` the API returns. 20 entries a page, `?page=` from 1
// to 100, `max_id` to keep later pages still while entries are added.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { deploymentMatcher } from '../../common/deployment.js'
import { parseId, userIdPattern } from '../entries/ids.js'
import { entryHtml, entryListHtml, layout, pagePolicy, readerPagePolicy, type PageContext } from '../render/pages.js'
import type { Hosts } from '../../common/deployment.js'
import type { Deployment } from '../store/types.js'
import { contextOf } from './context.js'
import { securePage } from '../../common/security-headers.js'
import { html, joinHtml } from '../../common/html.js'
import type { TimelineSource } from '../store/types.js'
import type { CoreDeps } from './deps.js'
import { encodeSegment } from '../render/urls.js'

const perPage = 20

export { wantsPage } from '../../common/site-page.js'

/**
 * A page's context: the deployment its Host names (else `fallback`), and the reader when
 * the gateway signed one by their account session. Only that kind of identity names a
 * reader: a credential of the API sent with a page's request signs no one in to it.
 */
export function pageContext(request: FastifyRequest, hosts: Hosts, fallback: Deployment = 'domestic'): PageContext {
  const identity = contextOf(request).identity
  const ctx: PageContext = { hosts, deployment: deploymentMatcher(hosts)(request.headers.host) ?? fallback }
  if (identity?.authMethod === 'session') ctx.reader = { id: identity.user, name: identity.userName }
  return ctx
}

/** The public 404 page, with the shared header (sign-in or the reader, the developer guide, the timeline). */
export function sendNotFoundPage(request: FastifyRequest, reply: FastifyReply, deps: Pick<CoreDeps, 'hosts'>): FastifyReply {
  const ctx = pageContext(request, deps.hosts)
  return sendPage(reply, 404, ctx, layout(ctx, 'Not found', html`<h1>Not found</h1><p>There is no such page. <a href="/">See the newest entries</a>.</p>`))
}

/**
 * Sends a page. One that names its reader is private to their browser; every page varies
 * with the Cookie header, by which the gateway knows the reader (RFC 9110 §12.5.5).
 */
export function sendPage(reply: FastifyReply, status: number, ctx: PageContext, document: string): FastifyReply {
  return securePage(reply, ctx.reader ? readerPagePolicy : pagePolicy).header('vary', 'Cookie').code(status).type('text/html; charset=utf-8').send(document)
}

export function pageRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const ctxOf = (request: FastifyRequest): PageContext => pageContext(request, deps.hosts)
  const notFound = (request: FastifyRequest, reply: FastifyReply) => sendNotFoundPage(request, reply, deps)

  /** `?page=` and `?max_id=`: anything out of range is read as absent (a page for people). */
  const paging = (request: FastifyRequest) => {
    const q = request.query as Record<string, unknown>
    const raw = typeof q.page === 'string' && /^[0-9]{1,3}$/.test(q.page) ? Number(q.page) : 1
    const page = Math.min(Math.max(raw, 1), 100)
    const maxId = typeof q.max_id === 'string' ? parseId(q.max_id) : null
    return { page, maxId }
  }

  const list = async (request: FastifyRequest, ctx: PageContext, source: TimelineSource, path: string) => {
    const { page, maxId } = paging(request)
    // One more than a page tells whether there is a next one.
    const result = await deps.store.timeline(
      { source, count: perPage + 1, page: 1, since: null, sort: 'new', maxId, hotSince: new Date(0) },
      null,
    ).then(async (first) => page === 1 ? first : deps.store.timeline(
      { source, count: perPage, page, since: null, sort: 'new', maxId: maxId ?? first.entries[0]?.id ?? null, hotSince: new Date(0) },
      null,
    ))
    const more = page === 1 ? result.entries.length > perPage : result.entries.length === perPage
    if (page === 1 && more) result.entries.pop()
    const anchor = maxId ?? (page === 1 ? result.entries[0]?.id ?? null : null)
    return entryListHtml(result, ctx, page, more, anchor, path)
  }

  app.get('/', async (request, reply) => {
    const ctx = ctxOf(request)
    return sendPage(reply, 200, ctx, layout(ctx, 'Newest entries', html`<h1>Newest entries</h1>${await list(request, ctx, { kind: 'public', deployment: ctx.deployment }, '/')}`))
  })

  app.get('/:id/', async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!userIdPattern.test(id)) return notFound(request, reply)
    const user = await deps.store.getUserWithFollowers(id)
    if (!user) return notFound(request, reply)
    const head = html`<h1>${user.name} <small>(${user.id})</small></h1><p class="followers">${user.followersCount} ${user.followersCount === 1 ? 'follower' : 'followers'}</p>`
    const ctx = ctxOf(request)
    return sendPage(reply, 200, ctx, layout(ctx, user.name, html`${head}${await list(request, ctx, { kind: 'user', userId: id }, `/${encodeSegment(id)}/`)}`))
  })

  app.get('/:id/:eid', async (request, reply) => {
    const { id, eid } = request.params as { id: string; eid: string }
    const entryId = parseId(eid)
    const entry = entryId && userIdPattern.test(id) ? await deps.store.getEntry(entryId) : null
    if (!entry || entry.authorId !== id) return notFound(request, reply)
    const page = await deps.store.pageOf([entry], null)
    const ctx = ctxOf(request)
    return sendPage(reply, 200, ctx, layout(ctx, `${entry.authorName}: ${entry.keyword}`, entryHtml(entry, page, ctx, true)))
  })

  app.get('/keyword/:word', async (request, reply) => {
    const { word } = request.params as { word: string }
    const keyword = await deps.store.getKeyword(word)
    if (!keyword) return notFound(request, reply)
    const related = keyword.related.length
      ? html`<p class="related">Related: ${joinHtml(keyword.related.map((w) => html`<a href="/keyword/${encodeSegment(w)}">${w}</a>`), ', ')}</p>`
      : ''
    const head = html`<h1>${keyword.word}</h1><p class="meta">${keyword.entryCount} entries · ${keyword.followersCount} followers</p>${related}`
    const ctx = ctxOf(request)
    return sendPage(reply, 200, ctx, layout(ctx, keyword.word, html`${head}${await list(request, ctx, { kind: 'keyword', word }, `/keyword/${encodeSegment(word)}`)}`))
  })
}
