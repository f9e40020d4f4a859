// What the gateway's application is built from (app.ts), and the operator app's base: the
// configuration and the services server.ts opens. A module of its own so the plugins and
// the operator app can name it without importing the app.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../common/config.js'
import type { WatchedCalls } from '../../common/dependency-watch.js'
import type { AppTracing } from '../../common/tracing.js'
import type { CredentialLookup } from '../domain/auth.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import type { LegacyPolicyCheck } from '../policy/service.js'
import type { ReplayCache } from '../replay/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { BearerAuthenticator } from '../auth/authenticate.js'

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
  /** Migration policy for verified legacy requests (docs/gateway.md#the-migration-policy). */
  policy?: LegacyPolicyCheck
  /** Usage report and per-minute counts (docs/gateway.md#the-usage-report, docs/gateway.md#the-operator-api-and-dashboard). */
  usage?: Pick<UsageRecorder, 'observe'>
  /** Logs the start and end of a core outage (forwards refused or timed out). */
  coreWatch?: WatchedCalls
  /** Spans of the public app's requests (docs/operations.md#traces), when tracing is on. */
  tracing?: AppTracing
  /** OAuth 2.0 access tokens on the API (docs/oauth2.md#calling-the-api); without it `Bearer` is refused as a scheme no verifier knows. */
  bearer?: BearerAuthenticator
}
