// The migration screens as a gateway feature (docs/gateway.md#the-migration-policy,
// docs/gateway.md#the-usage-report, docs/gateway.md#the-operator-api-and-dashboard): the
// policy's and the usage report's operator API, the notices' operator API and dashboard
// panel when the notices feature offers them, and the operator dashboard (its own sign-in,
// beside the token's scope) with the policy form, the usage table and every feature's panels.
import type { GatewayFeature } from '../host/feature.js'
import { adminTokenBinding } from '../operator/session-store.js'
import { dashboard } from './dashboard.js'
import { noticesApi } from './notices-api.js'
import { noticesDashboardSection } from './notices-panel.js'
import { policyApi } from './policy-api.js'
import { usageApi } from './usage-api.js'

export const migrationFeature: GatewayFeature = {
  name: 'migration',
  // The policy's and the usage report's tables are the host's (policy/, usage/).
  migrations: [],
  open({ config, policy, usageStore, usage, audit, users, operatorSessions, now, provided, dashboardPanels }) {
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
