// The OpenID Connect provider as a gateway feature (docs/oidc.md): its state and keys in
// the gateway schema, the provider and the pages where users register their own relying
// parties on the public app, the relying parties' and keys' operator API, the account
// page's list of sites signed in to, and the developer guide's section.
//
// Its code is loaded when it opens: the schema (and the kigo command) read its migrations
// without loading the rest.
import type { GatewayFeature } from '../host/feature.js'
import { oidcMigrations } from './migrations.js'

export const oidcFeature: GatewayFeature = {
  name: 'oidc',
  migrations: oidcMigrations,
  async open({ config, database, users, usage, metrics, audit, now, logger, account, options, provided }) {
    // OAuth 2.0 for the API (docs/oauth2.md) on the same provider: the oauth2 feature, opened before.
    const api = provided.apiAuthorization
    if (!api) throw new Error('the OpenID Connect provider opens after the oauth2 feature (src/gateway/features.ts)')
    const [{ errors }, { sendErrorPage }, { oidcAdminApi }, { registerClientPages }, { oidcGuideSection }, { accountSitesSection, oidcProvider, OidcProviders, OidcStore }] = await Promise.all([
      import('../../common/errors.js'),
      import('../account-area/error-page.js'),
      import('./admin-api.js'),
      import('./client-pages.js'),
      import('./guide.js'),
      import('./index.js'),
    ])
    const store = new OidcStore(database, config.secretKey, now)
    const providers = new OidcProviders({ config, store, users, now, usage, api, ...(logger ? { log: (message: string) => logger.info(message) } : {}) })
    // Its keys and store: the gateway verifies the API's Bearer tokens itself, and every
    // gateway refuses a revoked grant's.
    api.attach({ keys: () => providers.signingKeys(), grants: store, clients: store })
    await providers.load()
    return {
      async publicRoutes(app) {
        await app.register(oidcProvider, { config, store, users, providers, api, metrics, audit, now, account, ...(options.oidcKeyPollMs ? { keyPollMs: options.oidcKeyPollMs } : {}) })
        // The account pages where users register their own relying parties (docs/oidc.md#registering-a-site).
        await app.register(async (pages) => {
          const area = await account.mount(pages)
          pages.answerErrorsAs({
            wording: { internalMessage: 'Internal error', unavailable: () => errors.unavailable('store_unavailable', 'The store cannot answer right now; try again shortly') },
            logMessage: 'account page request failed',
            render: (_request, reply, answer) => sendErrorPage(reply, answer),
          })
          registerClientPages(pages, { area, store, audit })
        })
      },
      operatorRoutes: (api) => oidcAdminApi(api, { store, providers, users, audit }),
      accountSections: [(user, csrfToken) => accountSitesSection(store, user, csrfToken)],
      guideSections: [oidcGuideSection],
    }
  },
}
