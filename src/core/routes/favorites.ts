// favorites/create and favorites/destroy (docs/api.md#favoritescreate-and-favoritesdestroy): idempotent, so retries are safe.
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import { apiRoute, entryIdOf, readEntryRequest } from './api-route.js'
import { requester } from './context.js'
import type { CoreDeps } from './deps.js'
import { sendEntry } from './statuses.js'

export function favoriteRoutes(app: FastifyInstance, deps: CoreDeps): void {
  for (const star of [true, false]) {
    apiRoute(app, {
      operation: star ? 'favorites/create' : 'favorites/destroy',
      handler: async (request, reply) => {
        const user = requester(request)
        const { bodyFormats } = await readEntryRequest(request, { names: [], maxFiles: 0, fileBytes: deps.config.core.limits.fileBytes })
        const id = entryIdOf(request)
        const found = star ? await deps.store.addStar(id, user.user) : await deps.store.removeStar(id, user.user)
        const entry = found ? await deps.store.getEntry(id) : null
        if (!entry) throw errors.notFound('entry_not_found', 'No such entry')
        return sendEntry(deps, request, reply, entry, star, bodyFormats)
      },
    })
  }
}
