// The operator application (SPEC §6.4) on the admin port, bound to 127.0.0.1 by default:
// the operator API behind the admin bearer token, Prometheus metrics, health.
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { GatewayDeps } from '../app.js'
import type { IdentityStore } from '../store/index.js'
import { adminAuth } from './admin-auth.js'
import { adminApi } from './admin-api.js'

export interface OperatorDeps extends GatewayDeps {
  store: IdentityStore
}

export async function buildOperatorApp(deps: OperatorDeps): Promise<FastifyInstance> {
  const app = Fastify({ logger: deps.logger ?? false, logController: new LogController({ disableRequestLogging: true }), return503OnClosing: true })
  await app.register(adminAuth, { adminToken: deps.config.adminToken })
  await app.register(adminApi, { store: deps.store })

  app.get('/metrics', async (_request, reply) => {
    const body = await deps.metrics.registry.metrics()
    return reply.type(deps.metrics.registry.contentType).send(body)
  })
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: { status: 404, code: 'not_found', message: `No operator resource at ${request.method} ${request.url.split('?')[0]}` } }))
  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/readyz', async (_request, reply) => {
    const checks = await deps.ready()
    const ok = Object.values(checks).every(Boolean)
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable', checks })
  })
  return app
}
