// Timelines (docs/api.md#timelines): public, keyword, user, friends (the antenna) and album. Each is
// one store query for the page and three for its replies, stars and followers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { renderEntryList } from '../render/entry.js'
import type { TimelineQuery, TimelineSource } from '../store/types.js'
import { readEntryRequest } from './api-route.js'
import type { Params } from './params.js'
import { apiRoute } from './api-route.js'
import { contextOf, deploymentOf, sendPayload } from './context.js'
import { renderContext, type CoreDeps } from './deps.js'
import { hotPageIds } from './hot-ranking.js'
import { intParam, listParamNames, maxIdParam, sinceParam, sortParam, subjectOf, wordOf } from './list-params.js'

export const timelineLimits = { count: { fallback: 20, max: 200 }, page: { max: 100 } } as const

export function timelineRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const fileBytes = deps.config.core.limits.fileBytes
  const hotPage = hotPageIds(deps.store, deps.config.core.hotRefreshSeconds)

  const serve = async (
    request: FastifyRequest,
    reply: FastifyReply,
    sourceOf: (params: Params) => TimelineSource,
  ) => {
    const { params, bodyFormats } = await readEntryRequest(request, { names: [...listParamNames, 'word', 'id'], maxFiles: 0, fileBytes })
    const source = sourceOf(params)
    const query: TimelineQuery = {
      source,
      count: intParam(params, 'count', timelineLimits.count.fallback, 1, timelineLimits.count.max),
      page: intParam(params, 'page', 1, 1, timelineLimits.page.max),
      since: sinceParam(params),
      sort: sortParam(params),
      maxId: maxIdParam(params),
      hotSince: new Date(Date.now() - deps.config.core.hotEntriesHours * 3600_000),
    }
    const viewer = contextOf(request).identity?.user ?? null
    const page = query.sort === 'hot' ? await deps.store.entriesPage(await hotPage(query), viewer) : await deps.store.timeline(query, viewer)
    // An empty page may mean a user who does not exist: only then is it looked up. A keyword
    // nobody has posted to is an empty keyword (docs/api-differences.md#empty-keywords).
    if (page.entries.length === 0 && (source.kind === 'user' || source.kind === 'friends') && !(await deps.store.getUser(source.userId))) {
      throw errors.notFound('user_not_found', 'No such user')
    }
    const list = renderEntryList(page, bodyFormats, renderContext(deps, request))
    return sendPayload(request, reply, 'statuses', list.json, list.xml)
  }

  apiRoute(app, { operation: 'statuses/public_timeline', handler: (req, rep) => serve(req, rep, () => ({ kind: 'public', deployment: deploymentOf(req) })) })
  for (const operation of ['statuses/keyword_timeline', 'statuses/keyword_timeline/{word}']) {
    apiRoute(app, {
      operation,
      handler: (req, rep) => serve(req, rep, (params) => ({ kind: 'keyword', word: wordOf(req, params) })),
    })
  }
  // With or without `/{id}`: the `id` parameter may name the user too (subjectOf).
  for (const kind of ['user', 'friends'] as const) {
    for (const operation of [`statuses/${kind}_timeline`, `statuses/${kind}_timeline/{id}`]) {
      apiRoute(app, { operation, handler: (req, rep) => serve(req, rep, (params) => ({ kind, userId: subjectOf(req, params) })) })
    }
  }
  apiRoute(app, {
    operation: 'statuses/album',
    handler: (req, rep) => serve(req, rep, (params) => {
      const w = (params.get('word') ?? '').trim()
      return { kind: 'album', word: w === '' ? null : w }
    }),
  })
  apiRoute(app, { operation: 'statuses/album/{word}', handler: (req, rep) => serve(req, rep, (params) => ({ kind: 'album', word: wordOf(req, params) })) })
}
