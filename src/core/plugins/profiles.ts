// docs/gateway.md#forwarding: the public profile copy follows the identity. A write whose
// client (the gateway's connection) is gone is not started, checked again after the
// refresh, which may have waited for the store.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { clientGone, isWrite } from '../../common/client-gone.js'
import { contextOf, routeOf } from '../routes/context.js'
import type { ProfileRefresher } from '../routes/profiles.js'

export interface ProfilesOptions {
  profiles: ProfileRefresher
}

/**
 * A write whose client is gone is not started: the reply is taken over and nothing runs.
 * True when so.
 */
function stopIfClientGone(request: FastifyRequest, reply: FastifyReply): boolean {
  if (!isWrite(request.method) || !clientGone(request, reply)) return false
  request.log.info({ method: request.method, path: (request.raw.url ?? '').split('?')[0] }, 'client closed the connection before the write started; not started')
  reply.hijack()
  return true
}

async function profiles(app: FastifyInstance, { profiles }: ProfilesOptions): Promise<void> {
  app.addHook('preHandler', (request, reply, done) => {
    if (stopIfClientGone(request, reply)) return done()
    const identity = contextOf(request).identity
    const flags = routeOf(request)
    const refreshing = identity && flags.api && !flags.storesProfile ? profiles.refresh(identity) : undefined
    if (refreshing === undefined) return done()
    refreshing.then(() => {
      stopIfClientGone(request, reply)
      done()
    }, done)
  })
}

export default fp(profiles, { name: 'kigo-core-profiles', fastify: '5.x', dependencies: ['kigo-core-identity'] })
