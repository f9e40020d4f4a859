// The public pages (docs/api.md#pages): `/`, `/{id}/`, `/{id}/{eid}`, `/keyword/{word}`, the
// pages behind every `link` and `url` the API returns. 20 entries a page, `?page=` from 1
// to 100, `max_id` to keep later pages still while entries are added.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { deploymentMatcher } from '../../common/deployment.js'
import { parseId, userIdPattern } from '../entries/ids.js'
import { entryHtml, entryListHtml, layout, pagePolicy, type PageContext } from '../render/pages.js'
import { securePage } from '../../common/security-headers.js'
import { html, joinHtml } from '../../common/html.js'
import type { TimelineSource } from '../store/types.js'
import type { CoreDeps } from './deps.js'
import { encodeSegment } from '../render/urls.js'

const perPage = 20

/** Whether a browser asks (a navigation sends Accept: text/html; an API client or an <img> does not). */
export function wantsPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept
  return typeof accept === 'string' && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept)
}

/** The public 404 page, with the shared header (sign-in, the developer guide, the timeline). */
export function sendNotFoundPage(request: FastifyRequest, reply: FastifyReply, deps: Pick<CoreDeps, 'hosts'>): FastifyReply {
  const deploymentOf = deploymentMatcher(deps.hosts)
  const ctx: PageContext = { hosts: deps.hosts, deployment: deploymentOf(request.headers.host) ?? 'domestic' }
  return sendPage(reply, 404, layout(ctx, 'Not found', html`<h1>Not found</h1><p>There is no such page. <a href="/">See the newest entries</a>.</p>`))
}

export function sendPage(reply: FastifyReply, status: number, document: string): FastifyReply {
  return securePage(reply, pagePolicy).code(status).type('text/html; charset=utf-8').send(document)
}

export function pageRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const deploymentOf = deploymentMatcher(deps.hosts)
  const ctxOf = (request: FastifyRequest): PageContext => ({ hosts: deps.hosts, deployment: deploymentOf(request.headers.host) ?? 'domestic' })
  const notFound = (request: FastifyRequest, reply: FastifyReply) => sendNotFoundPage(request, reply, deps)

  /** `?page=` and `?max_id=`: anything out of range is read as absent (a page for people). */
  const paging = (request: FastifyRequest) => {
    const q = request.query as Record<string, unknown>
    const raw = typeof q.page === 'string' && /^[0-9]{1,3}$/.test(q.page) ? Number(q.page) : 1
    const page = Math.min(Math.max(raw, 1), 100)
    const maxId = typeof q.max_id === 'string' ? parseId(q.max_id) : null
    return { page, maxId }
  }

  const list = async (request: FastifyRequest, source: TimelineSource, path: string) => {
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
    return entryListHtml(result, ctxOf(request), page, more, anchor, path)
  }

  app.get('/', async (request, reply) => {
    const ctx = ctxOf(request)
    return sendPage(reply, 200, layout(ctx, 'Newest entries', html`<h1>Newest entries</h1>${await list(request, { kind: 'public', deployment: ctx.deployment }, '/')}`))
  })

  app.get('/:id/', async (request, reply) => {
    const { id } = request.params as { id: string }
    if (!userIdPattern.test(id)) return notFound(request, reply)
    const user = await deps.store.getUserWithFollowers(id)
    if (!user) return notFound(request, reply)
    const head = html`<h1>${user.name} <small>(${user.id})</small></h1><p class="followers">${user.followersCount} ${user.followersCount === 1 ? 'follower' : 'followers'}</p>`
    return sendPage(reply, 200, layout(ctxOf(request), user.name, html`${head}${await list(request, { kind: 'user', userId: id }, `/${encodeSegment(id)}/`)}`))
  })

  app.get('/:id/:eid', async (request, reply) => {
    const { id, eid } = request.params as { id: string; eid: string }
    const entryId = parseId(eid)
    const entry = entryId && userIdPattern.test(id) ? await deps.store.getEntry(entryId) : null
    if (!entry || entry.authorId !== id) return notFound(request, reply)
    const page = await deps.store.pageOf([entry], null)
    return sendPage(reply, 200, layout(ctxOf(request), `${entry.authorName}: ${entry.keyword}`, entryHtml(entry, page, ctxOf(request), true)))
  })

  app.get('/keyword/:word', async (request, reply) => {
    const { word } = request.params as { word: string }
    const keyword = await deps.store.getKeyword(word)
    if (!keyword) return notFound(request, reply)
    const related = keyword.related.length
      ? html`<p class="related">Related: ${joinHtml(keyword.related.map((w) => html`<a href="/keyword/${encodeSegment(w)}">${w}</a>`), ', ')}</p>`
      : ''
    const head = html`<h1>${keyword.word}</h1><p class="meta">${keyword.entryCount} entries · ${keyword.followersCount} followers</p>${related}`
    return sendPage(reply, 200, layout(ctxOf(request), keyword.word, html`${head}${await list(request, { kind: 'keyword', word }, `/keyword/${encodeSegment(word)}`)}`))
  })
}
