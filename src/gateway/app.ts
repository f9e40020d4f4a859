// The gateway's public application (SPEC §4): every request is authenticated by the
// route's rules, then forwarded unchanged to the core with a signed identity. Built
// without listening; server.ts listens. Each concern is a named plugin (src/gateway/plugins/)
// that declares what it needs; the order below is the order of their hooks.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyBaseLogger } from 'fastify'
import type { Config } from '../common/config.js'
import type { DependencyWatch } from '../common/dependency-watch.js'
import { requestLogging } from '../common/request-logger.js'
import type { CredentialLookup } from './domain/auth.js'
import type { GatewayMetrics } from './operator/metrics.js'
import type { LegacyPolicyCheck } from './policy/service.js'
import type { ReplayCache } from './replay/types.js'
import type { AttemptThrottle } from './throttle/attempts.js'
import type { UsageRecorder } from './usage/recorder.js'
import authentication from './plugins/authentication.js'
import bodyParsers from './plugins/body-parsers.js'
import gatewayErrors from './plugins/errors.js'
import forwarding from './plugins/forwarding.js'
import health from './plugins/health.js'
import origin from './plugins/origin.js'
import requestLog from './plugins/request-log.js'

export { sendError } from './plugins/errors.js'
export { repeatedCredentialHeader, toAuthRequest } from './plugins/authentication.js'
export type { PublicOrigin } from './plugins/origin.js'

export interface GatewayDeps {
  config: Config
  lookup: CredentialLookup
  replay: { oauth: ReplayCache; wsse: ReplayCache }
  throttle: AttemptThrottle
  metrics: GatewayMetrics
  /** Readiness of the gateway's own dependencies (store, Redis, core). */
  ready: () => Promise<Record<string, boolean>>
  /** A pino instance (Fastify 5 takes it as loggerInstance), or false for none. */
  logger?: FastifyBaseLogger | false
  now?: () => number
  /** Migration policy for verified legacy requests (SPEC §6.1). */
  policy?: LegacyPolicyCheck
  /** Usage report and per-minute counts (SPEC §6.3, §6.4). */
  usage?: Pick<UsageRecorder, 'observe'>
  /** Logs the start and end of a core outage (forwards refused or timed out). */
  coreWatch?: Pick<DependencyWatch, 'failed' | 'succeeded'>
}

export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...requestLogging(),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    // Deadlines on the client side (a body trickled a byte at a time must not hold a
    // connection forever): Node answers 408 and closes past them. Checked every second.
    requestTimeout: config.gateway.http.requestTimeoutMs,
    connectionTimeout: config.gateway.http.idleTimeoutMs,
    keepAliveTimeout: config.gateway.http.keepAliveTimeoutMs,
    http: { headersTimeout: config.gateway.http.headersTimeoutMs, connectionsCheckingInterval: 1000 },
  })
  app.server.maxConnections = config.gateway.http.maxConnections

  await app.register(bodyParsers)
  await app.register(gatewayErrors)
  await app.register(requestLog, { metrics: deps.metrics })
  await app.register(health, { ready: deps.ready })
  await app.register(origin, { config })
  await app.register(authentication, deps)
  await app.register(forwarding, { config, ...(deps.coreWatch ? { coreWatch: deps.coreWatch } : {}) })
  return app
}
