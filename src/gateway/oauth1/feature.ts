// OAuth 1.0a as one feature of the gateway (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// its tables' later migrations, the provider's endpoints (request and access tokens, the
// authorize step), its operator API (applications and access tokens), its account pages
// (an application's page, registration, edit, rotation, deletion, revoking an authorized
// one) and the account page's sections (the applications with access to the account; the
// user's own applications and the registration form). Its store (store.ts) is
// opened with the identity store (src/gateway/identity.ts), which answers for it: the
// verifiers (auth/oauth/) read applications and tokens through the cached credential
// lookup, so the hot request path does not go through this module.
//
// Its code is loaded when it opens: the schema (and the kigo command) read its migrations
// without loading the rest.
import type { GatewayFeature } from '../host/feature.js'
import { oauth1Migrations } from './migrations.js'

export const oauth1Feature: GatewayFeature = {
  name: 'oauth1',
  migrations: oauth1Migrations,
  async open({ config, options, users, replay, audit, policy, appUse, now, account }) {
    const [{ pageErrors }, { applicationsKit, applicationsSection, authorizedSection }, { oauth1AdminApi }, { registerApplications }, { oauthProvider }] = await Promise.all([
      import('../account-area/host.js'),
      import('./account-section.js'),
      import('./admin-api.js'),
      import('./application-pages.js'),
      import('./provider.js'),
    ])
    // The oauth1 policy may close the registration of new applications (policy/registration.ts).
    const registrationClosed = () => policy.registrationClosed('oauth1')
    // The account page's applications and registration form; a refused registration shows it again as posted.
    const applications = applicationsSection({ listConsumers: (owner) => users.listConsumers(owner), registrationClosed })
    return {
      async publicRoutes(app) {
        // The provider's endpoints: request and access tokens, the authorize step.
        await app.register(oauthProvider, { config, store: users, account, replay: replay.oauth, requestTokenTtlSeconds: options.requestTokenTtlSeconds ?? config.provider.requestTokenTtlSeconds, now })
        // The applications' pages on the account area: registration, an application's page, edit, rotation, deletion.
        await app.register(async (pages) => {
          const area = await account.mount(pages)
          pages.answerErrorsAs(pageErrors)
          registerApplications(pages, { store: users, now, migration: { policy } }, applicationsKit(area, applications))
        })
      },
      // The applications and access tokens of the operator API, in a scope of the identity administration.
      async operatorRoutes(api) {
        await api.register(oauth1AdminApi, { store: users, now, audit, registrationClosed })
      },
      // At the top of the account page, the applications holding access to it; below, the user's own.
      accountTopSections: [authorizedSection({ listAuthorizedApplications: (user) => users.listAuthorizedApplications(user), lastUsed: (user) => appUse.forUser(user), policy: () => policy.current().oauth1, now })],
      accountSections: [applications.section],
    }
  },
}
