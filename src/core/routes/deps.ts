// What the route modules share: configuration, the (guarded) store, profile refreshing.
import type { Config } from '../../common/config.js'
import type { Hosts } from '../../common/deployment.js'
import type { RenderContext } from '../render/entry.js'
import type { ContentStore } from '../store/types.js'
import type { FastifyRequest } from 'fastify'
import type { ProfileRefresher } from './profiles.js'
import { deploymentOf } from './context.js'

export interface CoreDeps {
  config: Config
  store: ContentStore
  profiles: ProfileRefresher
  hosts: Hosts
}

export function renderContext(deps: CoreDeps, request: FastifyRequest): RenderContext {
  return { hosts: deps.hosts, requestDeployment: deploymentOf(request) }
}
