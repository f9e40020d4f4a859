// The core's routes, one named plugin per area (docs/api.md). Each runs behind the identity,
// body and profile plugins, whose hooks fill the request context its handlers read.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { registerBodyRoutes } from '../routes/api-route.js'
import type { CoreDeps } from '../routes/deps.js'
import { favoriteRoutes } from '../routes/favorites.js'
import { followRoutes } from '../routes/follows.js'
import { healthRoutes } from '../routes/health.js'
import { keywordRoutes } from '../routes/keywords.js'
import { pageRoutes } from '../routes/pages.js'
import { photoRoutes } from '../routes/photos.js'
import { provisionRoutes } from '../routes/provision.js'
import { statusRoutes } from '../routes/statuses.js'
import { timelineRoutes } from '../routes/timelines.js'
import { userRoutes } from '../routes/users.js'

const behind = ['kigo-core-identity', 'kigo-core-bodies', 'kigo-core-profiles']

function area(name: string, routes: (app: FastifyInstance, deps: CoreDeps) => void) {
  return fp(async (app: FastifyInstance, deps: CoreDeps) => routes(app, deps), { name: `kigo-core-${name}`, fastify: '5.x', dependencies: behind })
}

/** /healthz and /readyz (docs/operations.md#dependability): the process, and its store. */
export const health = fp(async (app: FastifyInstance, deps: Pick<CoreDeps, 'store'>) => healthRoutes(app, deps.store), { name: 'kigo-core-health', fastify: '5.x' })

/** In the order they were always registered (the routes of an area never overlap another's). */
const areaRoutes: Record<string, (app: FastifyInstance, deps: CoreDeps) => void> = {
  statuses: statusRoutes,
  favorites: favoriteRoutes,
  photos: photoRoutes,
  users: (app) => userRoutes(app),
  timelines: timelineRoutes,
  follows: followRoutes,
  keywords: keywordRoutes,
  pages: pageRoutes,
  provision: provisionRoutes,
}

export const areas = Object.entries(areaRoutes).map(([name, routes]) => area(name, routes))

/**
 * The routes that take a body, which the areas above only collect, in one scope of their
 * own where @fastify/multipart is (api-route.ts): registered after every area.
 */
export const bodyRoutes = fp(registerBodyRoutes, { name: 'kigo-core-body-routes', fastify: '5.x', dependencies: Object.keys(areaRoutes).map((name) => `kigo-core-${name}`) })
