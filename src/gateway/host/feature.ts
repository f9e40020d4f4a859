// The one contract every feature of the gateway keeps (docs/development.md#adding-a-feature):
// an authentication method or a migration screen is a folder of its own whose feature.ts
// exports a `GatewayFeature`, and src/gateway/features.ts lists them. The central files
// (dependencies.ts, server.ts, app.ts, operator/app.ts, schema.ts) loop over that list and
// hold no feature's code: they apply each feature's migrations, open the features in the
// list's order with the host's services (`GatewayShared`), and mount what each returns
// (`FeatureContribution`).
//
// A feature imports the host layer (this folder, account-area, policy, usage, audit, mail,
// store, …), never a sibling feature (test/architecture/imports.test.ts). Where one
// feature needs what another offers, the host declares the interface (as `Provisions`
// below): the offering feature returns it under `provides`, and features later in the
// list read it from `shared.provided`.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../../common/config.js'
import type { SafeHtml } from '../../common/html.js'
import type { Db, Migration } from '../../common/sql.js'
import type { AccountPages } from '../account-area/facade.js'
import type { AccountSection } from '../account-area/context.js'
import type { AuditStore } from '../audit/store.js'
import type { MailBudget } from '../mail/budget.js'
import type { OperatorSessionStore } from '../operator/session-store.js'
import type { Outbox } from '../mail/index.js'
import type { GatewayMetrics } from '../metrics/metrics.js'
import type { PolicyService } from '../policy/service.js'
import type { ReplayCaches } from '../replay/create.js'
import type { SqlIdentityStore } from '../store/index.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import type { UserLocks } from '../throttle/user-locks.js'
import type { UsageRecorder } from '../usage/recorder.js'
import type { UsageStore } from '../usage/store.js'
import type { AppUseStore } from '../usage/app-use.js'
import type { GuideSection } from './guide.js'
import type { CredentialLookup } from '../domain/auth.js'
import type { RedisClient } from '../../common/redis.js'
import type { BearerAuthenticator } from '../auth/authenticate.js'
import type { ApiAuthorization } from './authorization.js'
import type { MigrationNotices } from './notices.js'

export type { AccountSection } from '../account-area/context.js'
export type { GuideSection } from './guide.js'
export type { MigrationNotices } from './notices.js'

/**
 * Routes a feature adds to an app: a Fastify plugin function, registered in a scope of
 * its own (encapsulated: its hooks, decorators and error answers stay in it).
 */
export type FeatureRoutes = (app: FastifyInstance) => Promise<void>

/** A panel of the operator dashboard, rendered for each view of it. */
export type DashboardPanel = () => Promise<SafeHtml>

/**
 * Told of every authenticated legacy or modern request once its decision is made, off the
 * answer's path: `client` is read only when the observer needs the name. Must not wait on
 * anything (count in memory, flush later).
 */
export type UsageObserver = Pick<UsageRecorder, 'observe'>

/** A readiness check of /readyz: resolves when the dependency answers (bounded by the host). */
export type ReadinessCheck = () => Promise<unknown>

/**
 * What features offer one another through the host, each optional: a feature that is
 * switched off (or not in the list) offers nothing, and its readers do without.
 */
export interface Provisions {
  /** Migration notices and the plan of a policy change (the notices feature). */
  notices?: MigrationNotices
  /** The API's Bearer tokens, verified at the gateway (the oauth2 feature, docs/oauth2.md). */
  bearer?: BearerAuthenticator
  /** The API's authorization on the OpenID Connect provider (the oauth2 feature, read by the OpenID Connect feature). */
  apiAuthorization?: ApiAuthorization
}

/** What start-up options a test or the embedded mode may set beside the configuration. */
export interface HostOptions {
  /** Lifetime of an OAuth 1.0a request token, seconds (config provider.requestTokenTtlSeconds otherwise). */
  requestTokenTtlSeconds?: number
  /** How long a login API cert may be exchanged, seconds (config loginApi.certTtlSeconds otherwise). */
  loginApiCertTtlSeconds?: number
  /** How often this gateway looks for an OpenID Connect signing key rotated by another, ms. */
  oidcKeyPollMs?: number
}

/** The host's services, the same for every feature. */
export interface GatewayShared {
  config: Config
  /** The gateway's logger, or false when it logs nothing (tests). */
  logger: FastifyBaseLogger | false
  now: () => number
  options: HostOptions
  /** The one database handle every store shares (the gateway schema, migrated). */
  database: Db
  /** The identity store: users, their passwords, sessions. */
  users: SqlIdentityStore
  metrics: GatewayMetrics
  /** Redis, when configured (shared state between gateways). */
  redis?: RedisClient
  /** The cached look-up of users' credentials, applications and tokens the verifiers use. */
  lookup: CredentialLookup
  /** Replay caches (Redis when configured) and the failed-attempt throttle. */
  replay: ReplayCaches
  throttle: AttemptThrottle
  userLocks: UserLocks
  /** The migration policy of every legacy method. */
  policy: PolicyService
  /** The usage report: its store, and the recorder every request is counted by. */
  usageStore: UsageStore
  usage: UsageRecorder
  /** When each authorized OAuth 1.0a application last acted for each user (recorded from every decision). */
  appUse: Pick<AppUseStore, 'forUser'>
  audit: AuditStore
  /** Every mail kigo sends goes through the outbox; mail a visitor can cause is budgeted. */
  outbox: Outbox
  mailBudget: MailBudget
  /**
   * The account area on the public app (login, the one session cookie, CSRF, page layout):
   * a feature's public routes call `account.mount(app)` in their own scope to use it.
   */
  account: AccountHost
  /** The operator dashboard's sign-ins, shared by the gateways (docs/security.md#operator-sessions). */
  operatorSessions: OperatorSessionStore
  /** What the features before this one in the list offer. */
  provided: Readonly<Provisions>
  /** Every feature's dashboard panels, in the list's order (complete once every feature is open: read them when a page is shown). */
  dashboardPanels: () => readonly DashboardPanel[]
}

/** The account area as features use it: mounted in a feature's own plugin scope. */
export interface AccountHost {
  /** Registers the cookie parser and the deployment check on `app` and gives the area as that scope sees it. */
  mount(app: FastifyInstance): Promise<AccountPages>
}

/** What an opened feature adds to the gateway; every part is optional. */
export interface FeatureContribution {
  /** Routes on the public app (after the forwarding route, whose paths they take over). */
  publicRoutes?: FeatureRoutes
  /** Routes on the operator app, inside the admin bearer token's scope. */
  operatorRoutes?: FeatureRoutes
  /** Routes on the operator app outside the token's scope (pages with their own sign-in). */
  operatorPages?: FeatureRoutes
  /** Sections of the account page (below the contact e-mail), in the list's order; a post of a section's form may answer with the page showing that section as posted (AccountPages.renderAccount). */
  accountSections?: AccountSection[]
  /** Sections at the top of the account page (below its notice and the tools on retired sign-ins), in the list's order: what has access to the account. */
  accountTopSections?: AccountSection[]
  /** Sections of the developer guide (after the samples), each linked from its table of contents. */
  guideSections?: GuideSection[]
  /** Panels of the operator dashboard, below its own. */
  dashboardPanels?: DashboardPanel[]
  /** Observers of every authenticated request's decision. */
  observers?: UsageObserver[]
  /** Named checks merged into /readyz (a name already taken is an error at start-up). */
  readiness?: Record<string, ReadinessCheck>
  /** What this feature offers the features after it. */
  provides?: Provisions
  /** Stops its timers and writes what it holds; called in the reverse order of opening, before the database closes. */
  close?(): Promise<void>
}

export interface GatewayFeature {
  /** Unique in the list; names the feature in logs and errors. */
  name: string
  /**
   * Its tables in the gateway schema. Each owner has its own range of versions; the
   * schema applies the owners' lists in the order of their first version (schema.ts), so
   * a new feature takes the next free range. A shipped migration never changes.
   */
  migrations: readonly Migration[]
  /** Opens the feature on the host's services; called once, in the list's order, after the schema is migrated. */
  open(shared: GatewayShared): Promise<FeatureContribution> | FeatureContribution
}
