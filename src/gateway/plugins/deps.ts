// What the gateway's application is built from (app.ts), and the operator app's base: the
// configuration and the services server.ts opens. A module of its own so the plugins and
// the operator app can name it without importing the app.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../common/config.js'
import type { DependencyWatch } from '../../common/dependency-watch.js'
import type { CredentialLookup } from '../domain/auth.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import type { LoginApiOptions } from '../login-api/index.js'
import type { OidcOptions } from '../oidc/index.js'
import type { OidcClientPagesOptions } from '../oidc/client-pages.js'
import type { LegacyPolicyCheck } from '../policy/service.js'
import type { ProviderOptions } from '../provider/index.js'
import type { ReplayCache } from '../replay/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import type { UsageRecorder } from '../usage/recorder.js'

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
  coreWatch?: Pick<DependencyWatch, 'failed' | 'succeeded'>
  /**
   * The account area on the public app: the OAuth provider and its pages
   * (docs/gateway.md#the-oauth-provider-and-the-account-pages), the login API
   * (docs/login-api.md), OpenID Connect and its client pages (docs/oidc.md).
   */
  accountArea?: AccountAreaOptions
}

export interface AccountAreaOptions {
  provider: ProviderOptions
  loginApi: LoginApiOptions
  oidc: OidcOptions
  oidcClientPages: OidcClientPagesOptions
}
