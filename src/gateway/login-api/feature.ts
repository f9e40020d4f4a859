// The legacy login API as a gateway feature (docs/login-api.md): its sites and certs in
// the gateway schema, the sign-in and exchange on the public app with the site pages on
// the account area, and the sites' operator API.
import type { GatewayFeature } from '../host/feature.js'
import { sitesAdminApi } from './admin-api.js'
import { loginApi } from './index.js'
import { loginApiMigrations } from './migrations.js'
import { LoginSiteStore } from './store.js'

export const loginApiFeature: GatewayFeature = {
  name: 'login-api',
  migrations: loginApiMigrations,
  open({ config, database, users, policy, usage, metrics, audit, now, account, options }) {
    const sites = new LoginSiteStore(database, config.secretKey)
    return {
      publicRoutes: (app) =>
        loginApi(app, {
          config,
          sites,
          store: users,
          policy,
          usage,
          metrics,
          audit,
          now,
          account,
          ...(options.loginApiCertTtlSeconds ? { certTtlSeconds: options.loginApiCertTtlSeconds } : {}),
        }),
      operatorRoutes: (api) => sitesAdminApi(api, { sites, now, audit }),
    }
  },
}
