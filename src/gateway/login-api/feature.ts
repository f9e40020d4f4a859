// The legacy login API as a gateway feature (docs/login-api.md): its sites and certs in
// the gateway schema, the sign-in and exchange on the public app with the site pages on
// the account area, and the sites' operator API.
//
// Its code is loaded when it opens: the schema (and the kigo command) read its migrations
// without loading the rest.
import type { GatewayFeature } from '../host/feature.js'
import { loginApiMigrations } from './migrations.js'

export const loginApiFeature: GatewayFeature = {
  name: 'login-api',
  migrations: loginApiMigrations,
  async open({ config, database, users, policy, usage, metrics, audit, now, account, options }) {
    const [{ sitesAdminApi }, { loginApi }, { LoginSiteStore }] = await Promise.all([import('./admin-api.js'), import('./index.js'), import('./store.js')])
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
