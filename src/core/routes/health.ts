// docs/operations.md#dependability: /healthz says the process answers; /readyz that the store does too.
import type { FastifyInstance } from 'fastify'
import { readinessCheckMs, withDeadline } from '../../common/deadline.js'
import { Unavailable } from '../../common/errors.js'
import type { ContentStore } from '../store/types.js'

/** The content store did not answer the readiness check in time: a 503 by classifyFailure. */
export class StoreNotReady extends Unavailable {
  override name = 'StoreNotReady'
  constructor() {
    super('store_unavailable', 'Not ready: the content store (database) is not answering', 1)
  }
}

export function healthRoutes(app: FastifyInstance, store: ContentStore): void {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    // Answered within 2 s whatever hangs; the outage itself is logged by the store's watch.
    try {
      await withDeadline(store.ping(), readinessCheckMs, 'store ping')
    } catch {
      throw new StoreNotReady()
    }
    return reply.header('cache-control', 'no-store').send({ status: 'ready' })
  })
}
