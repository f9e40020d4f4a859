// Users and follows (docs/api.md#users-and-follows): friendships/show, statuses/friends, statuses/followers,
// friendships/create and friendships/destroy.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { listXml, userObject } from '../render/entry.js'
import type { UserWithFollowers } from '../store/types.js'
import { apiRoute, readEntryRequest } from './api-route.js'
import { deploymentOf, requester, sendPayload } from './context.js'
import { renderContext, type CoreDeps } from './deps.js'
import { intParam, subjectOf } from './list-params.js'
import { ProfileRefresher } from './profiles.js'

/** docs/api.md#users-and-follows: 100 users a page. */
export const usersPerPage = 100

export function followRoutes(app: FastifyInstance, deps: CoreDeps): void {
  const fileBytes = deps.config.core.limits.fileBytes
  const user = (request: FastifyRequest, u: UserWithFollowers) => userObject(u, deploymentOf(request), renderContext(deps, request))

  const found = async (id: string): Promise<UserWithFollowers> => {
    const u = await deps.store.getUserWithFollowers(id)
    if (!u) throw errors.notFound('user_not_found', 'No such user')
    return u
  }

  // With or without `/{id}`: the `id` parameter may name the user too (subjectOf).
  const show = async (request: FastifyRequest, reply: FastifyReply) => {
    const { params } = await readEntryRequest(request, { names: ['id'], maxFiles: 0, fileBytes })
    const u = user(request, await found(subjectOf(request, params)))
    return sendPayload(request, reply, 'user', u, u)
  }
  apiRoute(app, { operation: 'friendships/show', handler: show })
  apiRoute(app, { operation: 'friendships/show/{id}', handler: show })

  const list = (direction: 'friends' | 'followers') => async (request: FastifyRequest, reply: FastifyReply) => {
    const { params } = await readEntryRequest(request, { names: ['page', 'id'], maxFiles: 0, fileBytes })
    const page = intParam(params, 'page', 1, 1, 100)
    const userId = subjectOf(request, params)
    const users = await deps.store.follows(userId, direction, usersPerPage, (page - 1) * usersPerPage)
    if (users.length === 0) await found(userId)
    const items = users.map((u) => user(request, u))
    return sendPayload(request, reply, 'users', items, listXml('user', items))
  }
  const friends = list('friends')
  const followers = list('followers')
  apiRoute(app, { operation: 'statuses/friends', handler: friends })
  apiRoute(app, { operation: 'statuses/friends/{id}', handler: friends })
  apiRoute(app, { operation: 'statuses/followers', handler: followers })
  apiRoute(app, { operation: 'statuses/followers/{id}', handler: followers })

  // Both writes are idempotent: the state afterwards is what was asked, whatever it was before.
  apiRoute(app, {
    operation: 'friendships/create',
    storesProfile: true,
    handler: async (request, reply) => {
      const me = requester(request)
      const { params } = await readEntryRequest(request, { names: ['id'], maxFiles: 0, fileBytes })
      const id = subjectOf(request, params)
      if (id === me.user) throw errors.badRequest('cannot_follow_self', 'A user cannot follow themselves')
      const name = ProfileRefresher.displayName(me)
      if (!(await deps.store.follow({ id: me.user, name }, id))) throw errors.notFound('user_not_found', 'No such user')
      deps.profiles.remember(me.user, name)
      const u = user(request, await found(id))
      return sendPayload(request, reply, 'user', u, u)
    },
  })
  apiRoute(app, {
    operation: 'friendships/destroy',
    handler: async (request, reply) => {
      const me = requester(request)
      const { params } = await readEntryRequest(request, { names: ['id'], maxFiles: 0, fileBytes })
      const id = subjectOf(request, params)
      if (!(await deps.store.unfollow(me.user, id))) throw errors.notFound('user_not_found', 'No such user')
      const u = user(request, await found(id))
      return sendPayload(request, reply, 'user', u, u)
    },
  })
}
