// The migration screens as a gateway feature (docs/gateway.md#the-migration-policy,
// docs/gateway.md#the-usage-report, docs/gateway.md#the-operator-api-and-dashboard): the
// policy's and the usage report's operator API, the notices' operator API and dashboard
// panel when the notices feature offers them, and the operator dashboard (its own sign-in,
// beside the token's scope) with the policy form, the usage table and every feature's panels.
//
// Its code is loaded when it opens: the schema (and the kigo command) read the feature
// list without loading the rest.
import type { GatewayFeature } from '../host/feature.js'

export const migrationFeature: GatewayFeature = {
  name: 'migration',
  // The policy's and the usage report's tables are the host's (policy/, usage/).
  migrations: [],
  async open({ config, policy, usageStore, usage, audit, users, operatorSessions, now, provided, dashboardPanels }) {
    const [{ adminTokenBinding }, { dashboard }, { noticesApi }, { noticesDashboardSection }, { policyApi }, { usageApi }] = await Promise.all([
      import('../operator/session-store.js'),
      import('./dashboard.js'),
      import('./notices-api.js'),
      import('./notices-panel.js'),
      import('./policy-api.js'),
      import('./usage-api.js'),
    ])
    const notices = provided.notices
    // Users' contact e-mails, by user ID (the usage table as an outreach list).
    const emails = async () => new Map((await users.listUsers()).map((u) => [u.id, u.email] as const))
    return {
      async operatorRoutes(api) {
        await api.register(policyApi, { policy, now, audit })
        await api.register(usageApi, { store: usageStore, recorder: usage, emails })
        if (notices) await api.register(noticesApi, { notices })
      },
      operatorPages: (app) =>
        dashboard(app, {
          adminToken: config.adminToken,
          sessions: { store: operatorSessions, binding: adminTokenBinding(config.secretKey, config.adminToken) },
          policy,
          usage: usageStore,
          recorder: usage,
          now,
          emails,
          audit,
          ...(notices ? { notices } : {}),
          sections: dashboardPanels,
        }),
      ...(notices ? { dashboardPanels: [noticesDashboardSection(notices, () => policy.current(), now)] } : {}),
    }
  },
}
