// Migration notices as a gateway feature (docs/gateway.md#migration-notices): the last
// endpoints each legacy client called (recorded from every request's decision, shown on
// the account page), and, unless notices.enabled is false, the notices pass that tells the
// people whose clients must move, the account page's notice, and the plan and funnel the
// migration screens show (offered as `notices`, host/notices.ts).
//
// Its code is loaded when it opens: the schema (and the kigo command) read its migrations
// without loading the rest.
import type { GatewayFeature, MigrationNotices } from '../host/feature.js'
import type { Notices } from './index.js'
import { noticeMigrations } from './migrations.js'

/** The notices as the other features read them (host/notices.ts). */
function offered(notices: Notices, { planText, dueSteps }: Pick<MigrationNotices, 'planText' | 'dueSteps'>): MigrationNotices {
  return {
    lookbackDays: notices.lookbackDays,
    plan: (method, state, from, policy) => notices.plan(method, state, from, policy),
    planText,
    dueSteps,
    runOnce: () => notices.runOnce(),
    list: (filter) => notices.list(filter),
    preview: (user, at) => notices.preview(user, at),
    funnel: () => notices.funnel(),
    summary: () => notices.summary(),
  }
}

export const noticesFeature: GatewayFeature = {
  name: 'notices',
  migrations: noticeMigrations,
  async open({ config, database, policy, outbox, metrics, now, logger }) {
    const [{ isConnectionFailure }, { noticeAccountSection }, { EndpointRecorder, EndpointStore }, { Notices }, { planText }, { dueSteps }] = await Promise.all([
      import('../../common/errors.js'),
      import('./account-section.js'),
      import('./endpoints.js'),
      import('./index.js'),
      import('./plan.js'),
      import('./rules.js'),
    ])
    const endpointStore = new EndpointStore(database)
    const endpoints = new EndpointRecorder(endpointStore, {
      flushMs: config.migration.usageFlushMs,
      onFlushError: (err) => logger && !isConnectionFailure(err) && logger.warn({ err: { message: (err as Error).message } }, 'endpoint flush failed; kept for the next one'),
    })
    endpoints.start()
    // Every gateway runs the pass; one at a time decides.
    const notices = config.notices.enabled ? new Notices({ config, db: database, policy, outbox, registry: metrics.registry, now, logger }) : undefined
    notices?.start()
    return {
      observers: [endpoints],
      ...(notices
        ? {
            // The notice that applies to the user, with each client's endpoints.
            accountSections: [noticeAccountSection({ notices, endpoints: endpointStore, policies: () => policy.current(), baseUrl: `${config.publicScheme}://${config.domesticHost}`, now })],
            provides: { notices: offered(notices, { planText, dueSteps }) },
          }
        : {}),
      async close() {
        await notices?.close()
        await endpoints.close().catch(() => undefined)
      },
    }
  },
}
