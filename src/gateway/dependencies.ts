// What the gateway opens before it builds its apps: the host's services (one database
// handle shared by every store: identity, policy, locks, usage, audit, sessions; Redis
// when configured, for the replay cache and throttling; the recorders that flush to the
// database; the outbox; the account area), a watch per dependency that logs one line when
// an outage starts and one when it ends (dependency-watch.ts), and then the features
// (features.ts), opened in the list's order on those services (host/feature.ts). Closed in
// the reverse order: the features first, and the last counts are written before the
// database closes (docs/operations.md#dependability).
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../common/config.js'
import { readinessCheckMs, withDeadline } from '../common/deadline.js'
import { DependencyWatch } from '../common/dependency-watch.js'
import { isConnectionFailure } from '../common/errors.js'
import { createRedis, redisReady, type RedisClient } from '../common/redis.js'
import { openDb, type Db } from '../common/sql.js'
import { withExemplars } from '../common/labelled-metrics.js'
import type { AppTracing } from '../common/tracing.js'
import { request } from 'undici'
import { AuditStore } from './audit/store.js'
import { openOutbox, type Outbox } from './mail/index.js'
import { createMetrics, watchPolicy, type GatewayMetrics } from './metrics/metrics.js'
import { OperatorSessionStore } from './operator/session-store.js'
import { effectiveState } from './policy/evaluate.js'
import { PolicyService } from './policy/service.js'
import { PolicyStore } from './policy/store.js'
import { legacyMethods } from './policy/types.js'
import type { PasswordReset } from './account-area/context.js'
import { PasswordResetStore } from './account-area/password-reset.js'
import { ContactEmailStore, EmailUndoStore, type ContactEmail } from './account-area/contact-email.js'
import { MailBudget } from './mail/budget.js'
import { createReplayCaches, type ReplayCaches } from './replay/create.js'
import { CachedCredentialLookup, type SqlIdentityStore } from './store/index.js'
import { identityStoreOn } from './identity.js'
import { CoreUserSync } from './store/core-users.js'
import { schemaMigrations } from './schema.js'
import { gatewayFeatures } from './features.js'
import type { AccountSection, DashboardPanel, FeatureContribution, GatewayFeature, GatewayShared, GuideSection, HostOptions, Provisions, UsageObserver } from './host/feature.js'
import { openAccountArea, type AccountAreaHost } from './account-area/index.js'
import { createFailureThrottle } from './throttle/create.js'
import type { AttemptThrottle } from './throttle/attempts.js'
import { UserLocks, UserLockStore } from './throttle/user-locks.js'
import { AppUseRecorder, AppUseStore } from './usage/app-use.js'
import { UsageRecorder } from './usage/recorder.js'
import { UsageStore } from './usage/store.js'

/**
 * Connections of the gateway's one database handle: what its identity store (10) and the
 * rest of its stores (4) had when each opened a pool of its own.
 */
const databaseConnections = 14

export interface GatewayDependencies {
  database: Db
  store: SqlIdentityStore
  lookup: CachedCredentialLookup
  metrics: GatewayMetrics
  replay: ReplayCaches
  throttle: AttemptThrottle
  policy: PolicyService
  userLocks: UserLocks
  usageStore: UsageStore
  usage: UsageRecorder
  appUseStore: AppUseStore
  appUse: AppUseRecorder
  audit: AuditStore
  operatorSessions: OperatorSessionStore
  /** "Forgot your password?" mails a link when an SMTP server is configured. */
  passwordReset?: PasswordReset
  /** Every mail kigo sends, sent off the request path by this gateway's sender (mail/index.ts). */
  outbox: Outbox
  /** A user's new contact e-mail, used once confirmed by mail. */
  contactEmail: ContactEmail
  coreWatch: DependencyWatch
  /** The account area (account-area/host.ts): one session store for every account page. */
  account: AccountAreaHost
  /** The features, opened in the list's order, each with what it adds. */
  features: ReadonlyArray<{ name: string; adds: FeatureContribution }>
  /** What the features offer (the API's Bearer tokens, the notices' plan), once all are open. */
  provided: Readonly<Provisions>
  /** Every feature's sections of the developer guide, in the list's order. */
  guideSections: GuideSection[]
  /** Told of every authenticated request's decision: the usage report, the applications' last use, then each feature's observers. */
  observer: UsageObserver
  /** Every check at once, each bounded: names the dependency that failed (/readyz). */
  ready(): Promise<Record<string, boolean>>
  close(): Promise<void>
}

/** Lifetimes of the account area's sessions, seconds (docs/gateway.md#the-oauth-provider-and-the-account-pages). */
export interface AccountSessionLifetimes {
  sessionTtlSeconds: number
  visitorSessionTtlSeconds: number
}

export interface OpenOptions {
  logger: FastifyBaseLogger | false
  now: () => number
  /** The account area's session lifetimes. */
  account: AccountSessionLifetimes
  /** What start-up options features read (host/feature.ts). */
  host?: HostOptions
  /** The features to open (features.ts otherwise). */
  features?: readonly GatewayFeature[]
  /** Spans around the database's statements (docs/operations.md#traces), when tracing is on. */
  tracing?: Pick<AppTracing, 'db' | 'sampledTraceId'>
}

/**
 * undici's own request, which the forwarding already loaded: the global fetch would load
 * Node's bundled copy of undici on the first readiness check (measured: 250–300 ms of CPU
 * while starting).
 */
async function coreAnswers(coreUrl: string): Promise<boolean> {
  try {
    const res = await request(new URL('/healthz', coreUrl), { signal: AbortSignal.timeout(readinessCheckMs) })
    await res.body.dump()
    return res.statusCode >= 200 && res.statusCode < 300
  } catch {
    return false
  }
}

export async function openGatewayDependencies(config: Config, { logger, now, tracing, account: lifetimes, host = {}, features = gatewayFeatures }: OpenOptions): Promise<GatewayDependencies> {
  const watchLog = logger || undefined
  let probeDb: () => Promise<unknown> = async () => undefined
  const pgWatch = new DependencyWatch('postgres', watchLog, { probe: () => probeDb() })
  const database = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: databaseConnections, timeouts: config.dependencies, watch: pgWatch, ...(tracing ? { traced: tracing.db } : {}) })
  probeDb = () => database.ping()
  let store: SqlIdentityStore
  try {
    store = await identityStoreOn(database, config.secretKey, schemaMigrations(features))
  } catch (err) {
    await database.close().catch(() => undefined)
    pgWatch.close()
    throw err
  }
  const redisWatch = new DependencyWatch('redis', watchLog, { probe: () => redis!.ping() })
  const redis: RedisClient | undefined = config.redisUrl
    ? createRedis(config.redisUrl, {
        commandTimeoutMs: config.dependencies.redisCommandTimeoutMs,
        connectTimeoutMs: config.dependencies.connectTimeoutMs,
        onError: (err) => redisWatch.failed(err),
      })
    : undefined
  redis?.on('ready', () => redisWatch.succeeded())
  const coreWatch = new DependencyWatch('core', watchLog)
  const metrics = createMetrics()
  // A slow request's latency bucket names its trace (docs/operations.md#traces).
  if (tracing) withExemplars(metrics.registry, [metrics.authDuration, metrics.upstreamDuration], tracing.sampledTraceId)
  const replay = createReplayCaches(config.auth, redis, {
    onError: (err, method) => {
      metrics.replayErrors.inc({ method })
      redisWatch.failed(err)
    },
    onFailOpen: (method) => metrics.replayFailOpen.inc({ method }),
  }, now)
  // The Redis client queues nothing while disconnected; give it a moment to connect so the
  // first requests after start-up are not refused. A Redis that is down at start-up is
  // not fatal: nonce checks fail closed until it answers.
  if (redis && !(await redisReady(redis, 3000)) && logger) logger.warn('Redis is not answering yet; nonce checks fail closed until it does')
  const lookup = new CachedCredentialLookup(store)
  // docs/gateway.md#registered-users-in-the-core: the users the core lacks, sent now and after each registration or rename.
  const coreUsers = new CoreUserSync(store, { coreUrl: config.gateway.coreUrl, secretKey: config.secretKey, ...(logger ? { log: logger } : {}) })
  store.sendUsersWith(() => coreUsers.sendAndWait())
  void coreUsers.send()

  // ---- migration controls and usage (docs/gateway.md#the-migration-policy, docs/gateway.md#the-usage-report).
  const policy = new PolicyService(new PolicyStore(database), {
    guideUrl: config.migration.guideUrl,
    refreshMs: config.migration.policyRefreshMs,
    now,
    // A database outage is logged by its watch (one line at each end), not every refresh.
    onRefreshError: (err) => logger && !isConnectionFailure(err) && logger.warn({ error: (err as Error).message }, 'migration policy refresh failed; keeping the last one read'),
  })
  await policy.start()
  // Operator locks on users (throttle/user-locks.ts), polled like the policy.
  const userLocks = new UserLocks(new UserLockStore(database), {
    refreshMs: config.migration.policyRefreshMs,
    onRefreshError: (err) => logger && !isConnectionFailure(err) && logger.warn({ error: (err as Error).message }, 'user locks refresh failed; keeping the last ones read'),
  })
  await userLocks.start()
  const throttle = createFailureThrottle(config.auth, redis, {
    onError: (err) => {
      metrics.throttleErrors.inc()
      redisWatch.failed(err)
    },
  }, {
    locks: userLocks,
    onRefusal: (realm, rule) => metrics.throttleRefusals.inc({ realm, rule }),
  })
  // docs/api.md#pages: IDs that are now reserved cannot be created; users who already have one
  // keep working, but their pages are unreachable, so the operator is told at start-up.
  const reserved = await store.usersWithReservedIds()
  if (reserved.length > 0 && logger) {
    logger.warn({ users: reserved }, 'users with reserved IDs exist (docs/api.md#pages): their public pages cannot be reached; rename or retire them')
  }
  watchPolicy(metrics, () => {
    const p = policy.current()
    return legacyMethods.map((method) => ({ method, state: effectiveState(p[method], now()), sunset: p[method].sunset }))
  })
  const usageStore = new UsageStore(database, { maxClientsPerUser: config.migration.usageMaxClientsPerUser })
  const usage = new UsageRecorder(usageStore, {
    flushMs: config.migration.usageFlushMs,
    retainRowsMs: config.migration.usageRetentionDays * 86_400_000,
    now,
    onFlushError: (err) => logger && !isConnectionFailure(err) && logger.warn({ error: (err as Error).message }, 'usage flush failed; counts kept for the next one'),
  })
  usage.start()
  // When each authorized application last acted for its user (the account page).
  const appUseStore = new AppUseStore(database)
  const appUse = new AppUseRecorder(appUseStore, {
    flushMs: config.migration.usageFlushMs,
    onFlushError: (err) => logger && !isConnectionFailure(err) && logger.warn({ err: { message: (err as Error).message } }, 'last-used flush failed; kept for the next one'),
  })
  appUse.start()

  // ---- the outbox (docs/operations.md#mail): every gateway runs the sender; a row goes out once.
  const outbox = openOutbox(database, config, {
    now,
    counter: metrics.mailSends,
    onPassError: (err) => logger && !isConnectionFailure(err) && logger.warn({ err: { message: (err as Error).message } }, 'outbox pass failed; the next one tries again'),
  })
  outbox.start()
  // Mail a visitor can cause (reset links, confirmation links) is budgeted in the store, shared by every gateway.
  const mailBudget = new MailBudget(database, (kind) => metrics.mailBudgetRefusals.inc({ kind }))

  // Every check runs at once and each is bounded, so /readyz answers within 2 s even when a
  // dependency accepts connections and never answers; the body names the one that failed.
  const answers = (work: () => Promise<unknown>, what: string) =>
    withDeadline(Promise.resolve().then(work), readinessCheckMs, what).then(() => true, () => false)

  const audit = new AuditStore(database)
  const operatorSessions = new OperatorSessionStore(database)
  const passwordReset: PasswordReset | undefined = config.mail.smtpUrl === null ? undefined : { store: new PasswordResetStore(database), outbox, ttlSeconds: config.mail.resetTtlSeconds, budget: mailBudget }
  const contactEmail: ContactEmail = { store: new ContactEmailStore(database), undo: new EmailUndoStore(database), budget: mailBudget, outbox, ttlSeconds: config.mail.verifyTtlSeconds }

  const closeHost = async () => {
    policy.close()
    userLocks.close()
    await outbox.close()
    await usage.close().catch((err) => logger && logger.warn({ error: (err as Error).message }, 'final usage flush failed'))
    await appUse.close().catch(() => undefined)
    await replay.close().catch(() => undefined)
    await throttle.close().catch(() => undefined)
    if (redis) redis.disconnect()
    await coreUsers.close()
    await store.close()
    await database.close().catch(() => undefined)
    for (const w of [pgWatch, redisWatch, coreWatch]) w.close()
  }

  // ---- the account area (account-area/host.ts): one session store; the features add sections to its page.
  const accountSections: AccountSection[] = []
  const accountTopSections: AccountSection[] = []
  const account = openAccountArea({
    context: {
      config,
      store,
      throttle,
      now,
      migration: { policy, usage: usageStore },
      audit,
      ...(passwordReset ? { passwordReset } : {}),
      contactEmail,
      accountSections,
      accountTopSections,
    },
    ...lifetimes,
  })

  // ---- the features (features.ts), in the list's order; each reads what the ones before it offer.
  const provided: Provisions = {}
  const guideSections: GuideSection[] = []
  const dashboardPanels: DashboardPanel[] = []
  const observers: UsageObserver[] = [usage, { observe: (decision, _client, at) => appUse.observe(decision, at) }]
  const readiness = new Map<string, () => Promise<unknown>>()
  const opened: Array<{ name: string; adds: FeatureContribution }> = []
  const shared: GatewayShared = {
    config, logger, now, options: host, database, users: store, lookup, metrics, ...(redis ? { redis } : {}), replay, throttle, userLocks, policy, usageStore, usage, appUse: appUseStore, audit, outbox, mailBudget, account, operatorSessions,
    provided,
    dashboardPanels: () => dashboardPanels,
  }
  const closeFeatures = async () => {
    for (const { name, adds } of [...opened].reverse()) {
      await adds.close?.().catch((err) => logger && logger.warn({ feature: name, error: (err as Error).message }, 'a feature failed to close'))
    }
  }
  try {
    for (const feature of features) {
      const adds = await feature.open(shared)
      opened.push({ name: feature.name, adds })
      accountSections.push(...(adds.accountSections ?? []))
      accountTopSections.push(...(adds.accountTopSections ?? []))
      guideSections.push(...(adds.guideSections ?? []))
      dashboardPanels.push(...(adds.dashboardPanels ?? []))
      observers.push(...(adds.observers ?? []))
      for (const [name, check] of Object.entries(adds.readiness ?? {})) {
        if (readiness.has(name) || ['store', 'redis', 'core'].includes(name)) throw new Error(`readiness check ${name} of feature ${feature.name} is named twice`)
        readiness.set(name, check)
      }
      Object.assign(provided, adds.provides)
    }
  } catch (err) {
    await closeFeatures()
    await closeHost()
    throw err
  }
  const observer = composeObservers(observers)

  return {
    database,
    store,
    lookup,
    metrics,
    replay,
    throttle,
    policy,
    userLocks,
    usageStore,
    usage,
    appUseStore,
    appUse,
    audit,
    operatorSessions,
    ...(passwordReset ? { passwordReset } : {}),
    outbox,
    contactEmail,
    coreWatch,
    account,
    features: opened,
    provided,
    guideSections,
    observer,
    async ready() {
      const [storeOk, redisOk, coreOk, ...featureOk] = await Promise.all([
        answers(() => database.ping(), 'store'),
        redis ? answers(() => redis.ping(), 'redis') : Promise.resolve(undefined),
        coreAnswers(config.gateway.coreUrl),
        ...[...readiness].map(([name, check]) => answers(check, name)),
      ])
      return { store: storeOk, ...(redisOk === undefined ? {} : { redis: redisOk }), core: coreOk, ...Object.fromEntries([...readiness.keys()].map((name, i) => [name, featureOk[i]!])) }
    },
    async close() {
      await closeFeatures()
      await closeHost()
    },
  }
}

/** One observer telling each of `observers` in turn (the list is fixed once the features are open). */
function composeObservers(observers: readonly UsageObserver[]): UsageObserver {
  return {
    observe(decision, client, at, endpoint, deployment) {
      for (const o of observers) o.observe(decision, client, at, endpoint, deployment)
    },
  }
}
