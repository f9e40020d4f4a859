// The operator application (docs/gateway.md#the-operator-api-and-dashboard) on the admin port, bound to 127.0.0.1 by default:
// the operator API behind the admin bearer token, Prometheus metrics, health.
import Fastify, { type FastifyInstance } from 'fastify'
import { clientDeadlines, closeSilentConnections } from '../../common/client-deadlines.js'
import errorAnswers from '../../common/error-answers.js'
import { metricsTokenHook } from '../../common/metrics-token.js'
import { clientErrorHandler, frameworkErrors } from '../../common/request-edges.js'
import { requestLogging } from '../../common/request-logger.js'
import favicon from '../plugins/favicon.js'
import health from '../plugins/health.js'
import type { GatewayDeps } from '../plugins/deps.js'
import type { IdentityAdministration } from '../store/types.js'
import { adminAuth } from './admin-auth.js'
import { hostNameCheck } from '../../common/host-names.js'
import { adminApi } from './admin-api.js'
import type { AuditStore } from '../audit/store.js'
import { auditApi } from './audit-api.js'
import { sitesAdminApi } from '../login-api/admin-api.js'
import type { LoginSiteStore } from '../login-api/store.js'
import type { PolicyService } from '../policy/service.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { UsageStore } from '../usage/store.js'
import { dashboard } from './dashboard.js'
import { noOperatorResource, operatorErrors, sendOperatorJson } from './errors.js'
import { policyApi } from './policy-api.js'
import { adminTokenBinding, type OperatorSessionStore } from './session-store.js'
import { sessionsApi } from './sessions-api.js'
import { locksApi } from './locks-api.js'
import type { UserLocks } from '../throttle/user-locks.js'
import { usageApi } from './usage-api.js'
import type { Notices } from '../notices/index.js'
import { noticesApi } from './notices-api.js'
import type { ContactEmailStore } from '../account-area/contact-email.js'
import { noticesDashboardSection } from './notices-panel.js'
import { oidcAdminApi } from '../oidc/admin-api.js'
import { oauth2AppsAdminApi, type OAuth2AppsAdminOptions } from '../oauth2/admin-api.js'
import type { OidcProviders } from '../oidc/index.js'
import type { OidcStore } from '../oidc/store.js'

export interface OperatorDeps extends GatewayDeps {
  store: IdentityAdministration
  /** Migration policy, usage report and dashboard (docs/gateway.md#the-migration-policy, docs/gateway.md#the-usage-report, docs/gateway.md#the-operator-api-and-dashboard). */
  migration?: { policy: PolicyService; usageStore: UsageStore; recorder: UsageRecorder }
  /** The audit trail of operator changes. */
  audit?: AuditStore
  /** Dashboard sign-ins, shared by the gateways (docs/security.md#operator-sessions). */
  operatorSessions?: OperatorSessionStore
  /** Operator locks on users (docs/operations.md#user-locks). */
  userLocks?: UserLocks
  /** The OpenID Connect provider's relying parties and keys (docs/oidc.md). */
  oidc?: { store: OidcStore; providers: Pick<OidcProviders, 'rotateKey'>; applications?: OAuth2AppsAdminOptions['applications'] }
  /** The login API's sites (docs/login-api.md). */
  sites?: LoginSiteStore
  /** Migration notices and the policy plan (docs/gateway.md#migration-notices). */
  notices?: Notices
  /** New contact e-mails waiting for their owners' confirmation (shown with a user). */
  contactEmails?: Pick<ContactEmailStore, 'pending'>
}

export async function buildOperatorApp(deps: OperatorDeps): Promise<FastifyInstance> {
  // The public port's client deadlines here too: a client that sends a head slowly, or
  // never reads an answer, must not hold the operator port (or its close) forever. Its
  // own connection cap: a flood here cannot take the descriptors the public port needs.
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...requestLogging(),
    return503OnClosing: true,
    ...clientDeadlines(deps.config.gateway.http),
    // The framework's own failures in the operator API's JSON, never Fastify's bodies.
    frameworkErrors: frameworkErrors((request, reply, err) => sendOperatorJson(request, reply, err, undefined)),
    clientErrorHandler,
  })
  app.server.maxConnections = deps.config.gateway.http.operatorMaxConnections
  closeSilentConnections(app, deps.config.gateway.http.idleTimeoutMs)
  // Only its own Host names (DNS rebinding), and one Host (docs/security.md#request-edges).
  hostNameCheck(app, deps.config.gateway.adminHostNames, { port: 'operator port', setting: 'KIGO_ADMIN_HOST_NAMES' })
  // Failures in the operator API's JSON; the dashboard and some API areas word their own.
  await app.register(errorAnswers, { ...operatorErrors, notFound: (request, reply) => sendOperatorJson(request, reply, noOperatorResource(request.method, request.url), undefined) })
  const migration = deps.migration
  const now = deps.now ?? Date.now
  const emails = async () => new Map((await deps.store.listUsers()).map((u) => [u.id, u.email] as const))
  // The JSON API behind the bearer token, in a scope of its own so that the dashboard
  // beside it can serve its sign-in form (docs/gateway.md#the-operator-api-and-dashboard).
  await app.register(async (api) => {
    await api.register(adminAuth, { adminToken: deps.config.adminToken })
    const audit = deps.audit
    const contactEmails = deps.contactEmails
    await api.register(adminApi, { store: deps.store, now, ...(audit ? { audit } : {}), ...(contactEmails ? { pendingEmail: (user: string, at: number) => contactEmails.pending(user, at) } : {}) })
    if (audit) await api.register(auditApi, { audit })
    if (deps.userLocks) await api.register(locksApi, { locks: deps.userLocks, now, ...(audit ? { audit } : {}) })
    if (deps.operatorSessions) await api.register(sessionsApi, { sessions: deps.operatorSessions, now, ...(audit ? { audit } : {}) })
    if (deps.oidc) await api.register(oidcAdminApi, { store: deps.oidc.store, providers: deps.oidc.providers, users: deps.store, ...(audit ? { audit } : {}) })
    // OAuth 2.0 turned on for an OAuth 1.0a application (docs/oauth2.md#for-an-oauth-10a-application).
    if (deps.oidc?.applications) await api.register(oauth2AppsAdminApi, { applications: deps.oidc.applications, ...(audit ? { audit } : {}) })
    if (deps.sites) await api.register(sitesAdminApi, { sites: deps.sites, now, ...(audit ? { audit } : {}) })
    if (migration) {
      await api.register(policyApi, { policy: migration.policy, now, ...(audit ? { audit } : {}) })
      await api.register(usageApi, { store: migration.usageStore, recorder: migration.recorder, emails })
    }
    if (deps.notices) await api.register(noticesApi, { notices: deps.notices })
    // Unknown operator paths answer only to the token holder, as before the split.
    api.all('/admin/*', async (request) => {
      throw noOperatorResource(request.method, request.url)
    })
  })
  if (migration && deps.operatorSessions) {
    await app.register(dashboard, {
      adminToken: deps.config.adminToken,
      sessions: { store: deps.operatorSessions, binding: adminTokenBinding(deps.config.secretKey, deps.config.adminToken) },
      policy: migration.policy,
      usage: migration.usageStore,
      recorder: migration.recorder,
      now,
      emails,
      ...(deps.audit ? { audit: deps.audit } : {}),
      ...(deps.notices ? { notices: deps.notices, sections: [noticesDashboardSection(deps.notices, () => migration.policy.current(), now)] } : {}),
    })
  }

  const metricsToken = metricsTokenHook(deps.config.metricsToken)
  app.get('/metrics', { ...(metricsToken ? { onRequest: metricsToken } : {}) }, async (_request, reply) => {
    const body = await deps.metrics.registry.metrics()
    return reply.type(deps.metrics.registry.contentType).send(body)
  })
  await app.register(health, { ready: deps.ready })
  await app.register(favicon)
  return app
}
