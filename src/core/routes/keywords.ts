// Keywords (docs/api.md#keywords): the Keyword object, show, hot, list, the keywords a user
// follows, follow and unfollow, relations.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import type { XmlObject } from '../../common/formats.js'
import { baseUrl } from '../../common/deployment.js'
import { checkKeyword } from '../entries/limits.js'
import { listXml } from '../render/entry.js'
import { keywordPageUrl } from '../render/urls.js'
import type { KeywordRow } from '../store/types.js'
import { apiRoute, readEntryRequest } from './api-route.js'
import { keptRanking } from './hot-ranking.js'
import { deploymentOf, requester, sendPayload } from './context.js'
import type { CoreDeps } from './deps.js'
import { intParam, subjectOf, wordOf } from './list-params.js'
import { ProfileRefresher } from './profiles.js'

/** keywords/hot and keywords/list: at most 100 (docs/api.md#keywords). */
export const keywordsPerPage = 100

export function keywordObject(k: KeywordRow, base: string, withRelated: boolean): { json: Record<string, unknown>; xml: XmlObject } {
  const common = { word: k.word, title: k.word, link: keywordPageUrl(base, k.word), entry_count: k.entryCount, followers_count: k.followersCount }
  const userKeyword = /^id:(.+)$/.exec(k.word)
  const urlName: Record<string, string> = userKeyword ? { url_name: userKeyword[1]! } : {}
  if (!withRelated) return { json: { ...common, ...urlName }, xml: { ...common, ...urlName } }
  return {
    json: { ...common, related_keywords: k.related, ...urlName },
    // One `related_keywords` element per word, none when there are none (docs/api-differences.md#xml-lists).
    xml: { ...common, related_keywords: k.related, ...urlName },
  }
}

/** keywords/hot's ranking, kept for `core.hotRefreshSeconds` (hot-ranking.ts). */
function hotKeywordsRanking(deps: CoreDeps): () => Promise<KeywordRow[]> {
  const { hotKeywordsHours, hotRefreshSeconds } = deps.config.core
  const ranking = keptRanking(hotRefreshSeconds, 1, () => deps.store.hotKeywords(new Date(Date.now() - hotKeywordsHours * 3600_000), keywordsPerPage))
  return () => ranking('hot', undefined)
}

export function keywordRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const limits = deps.config.core.limits
  const fileBytes = limits.fileBytes
  const base = (request: FastifyRequest) => baseUrl(deps.hosts, deploymentOf(request))
  const withRelated = (v: string | undefined) => !(v === '1' || v === 'true')
  const hotKeywords = hotKeywordsRanking(deps)

  const sendOne = (request: FastifyRequest, reply: FastifyReply, k: KeywordRow, related: boolean) => {
    const o = keywordObject(k, base(request), related)
    return sendPayload(request, reply, 'keyword', o.json, o.xml)
  }
  const sendList = (request: FastifyRequest, reply: FastifyReply, ks: KeywordRow[], related: boolean) => {
    const os = ks.map((k) => keywordObject(k, base(request), related))
    return sendPayload(request, reply, 'keywords', os.map((o) => o.json), listXml('keyword', os.map((o) => o.xml)))
  }
  const existing = async (word: string) => {
    const k = await deps.store.getKeyword(word)
    if (!k) throw errors.notFound('keyword_not_found', 'No such keyword')
    return k
  }

  for (const operation of ['keywords/show', 'keywords/show/{word}']) {
    apiRoute(app, {
      operation,
      handler: async (request, reply) => {
        const { params } = await readEntryRequest(request, { names: ['word', 'without_related_keywords'], maxFiles: 0, fileBytes })
        const k = await existing(wordOf(request, params))
        return sendOne(request, reply, k, withRelated(params.get('without_related_keywords')))
      },
    })
  }

  apiRoute(app, {
    operation: 'keywords/hot',
    handler: async (request, reply) => {
      const { params } = await readEntryRequest(request, { names: ['without_related_keywords'], maxFiles: 0, fileBytes })
      return sendList(request, reply, await hotKeywords(), withRelated(params.get('without_related_keywords')))
    },
  })

  apiRoute(app, {
    operation: 'keywords/list',
    handler: async (request, reply) => {
      const { params } = await readEntryRequest(request, { names: ['word', 'page', 'without_related_keywords'], maxFiles: 0, fileBytes })
      const page = intParam(params, 'page', 1, 1, 100)
      const filter = (params.get('word') ?? '').trim()
      const ks = await deps.store.listKeywords(filter === '' ? null : filter, keywordsPerPage, (page - 1) * keywordsPerPage)
      return sendList(request, reply, ks, withRelated(params.get('without_related_keywords')))
    },
  })

  // With or without `/{id}`: the `id` parameter may name the user too (subjectOf).
  const followed = async (request: FastifyRequest, reply: FastifyReply) => {
    const { params } = await readEntryRequest(request, { names: ['without_related_keywords', 'id'], maxFiles: 0, fileBytes })
    const userId = subjectOf(request, params)
    const ks = await deps.store.followedKeywords(userId)
    if (ks.length === 0 && !(await deps.store.getUser(userId))) throw errors.notFound('user_not_found', 'No such user')
    return sendList(request, reply, ks, withRelated(params.get('without_related_keywords')))
  }
  apiRoute(app, { operation: 'statuses/keywords', handler: followed })
  apiRoute(app, { operation: 'statuses/keywords/{id}', handler: followed })

  // Following a keyword nobody has posted to is 404, like following an unknown user: the
  // keyword is created by its first entry (docs/api.md#statusesupdate rule 3), not by a follow.
  for (const [operation, follow] of [
    ['keywords/create', true], ['keywords/create/{word}', true], ['keywords/destroy', false], ['keywords/destroy/{word}', false],
  ] as const) {
    apiRoute(app, {
      operation,
      storesProfile: follow,
      handler: async (request, reply) => {
        const me = requester(request)
        const { params } = await readEntryRequest(request, { names: ['word', 'without_related_keywords'], maxFiles: 0, fileBytes })
        const word = wordOf(request, params)
        checkKeyword(word, limits)
        const name = ProfileRefresher.displayName(me)
        const ok = follow ? await deps.store.followKeyword({ id: me.user, name }, word) : await deps.store.unfollowKeyword(me.user, word)
        if (!ok) throw errors.notFound('keyword_not_found', 'No such keyword')
        if (follow) deps.profiles.remember(me.user, name)
        return sendOne(request, reply, await existing(word), withRelated(params.get('without_related_keywords')))
      },
    })
  }

  for (const [operation, related] of [['keywords/relation/create', true], ['keywords/relation/destroy', false]] as const) {
    apiRoute(app, {
      operation,
      handler: async (request, reply) => {
        requester(request)
        const { params } = await readEntryRequest(request, { names: ['word1', 'word2'], maxFiles: 0, fileBytes })
        const word1 = wordOf(request, params, 'word1')
        const word2 = wordOf(request, params, 'word2')
        if (word1 === word2) throw errors.badRequest('invalid_parameter', 'word1 and word2 must be different keywords')
        if (!(await deps.store.relateKeywords(word1, word2, related))) throw errors.notFound('keyword_not_found', 'No such keyword')
        return sendOne(request, reply, await existing(word1), true)
      },
    })
  }
}
