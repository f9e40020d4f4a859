// SPEC §7: /healthz says the process answers; /readyz that the store does too.
import type { FastifyInstance } from 'fastify'
import { errors } from '../../common/errors.js'
import type { ContentStore } from '../store/types.js'

const pingTimeoutMs = 2000

export function healthRoutes(app: FastifyInstance, store: ContentStore): void {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        store.ping(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('store ping timed out')), pingTimeoutMs)
        }),
      ])
    } catch (err) {
      app.log.warn({ err }, 'readiness: store not reachable')
      throw errors.unavailable('store_unavailable', 'The content store is not reachable')
    } finally {
      clearTimeout(timer)
    }
    return reply.header('cache-control', 'no-store').send({ status: 'ready' })
  })
}
