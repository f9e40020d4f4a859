// Liveness and readiness (docs/operations.md#dependability): /healthz answers while the process runs; /readyz
// asks the app's own dependencies and answers 503 while one of them does not.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { readinessStatus } from '../../common/errors.js'

export interface HealthOptions {
  /** Readiness of each dependency, by name. */
  ready: () => Promise<Record<string, boolean>>
}

async function health(app: FastifyInstance, options: HealthOptions): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.send({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    const checks = await options.ready()
    const ok = Object.values(checks).every(Boolean)
    return reply.code(readinessStatus(ok)).send({ status: ok ? 'ready' : 'unavailable', checks })
  })
}

export default fp(health, { name: 'kigo-health', fastify: '5.x' })
