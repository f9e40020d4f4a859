// OAuth 2.0 for the API as a gateway feature (docs/oauth2.md): its revoked grants in the
// gateway schema, the Bearer tokens verified at the gateway (`provides.bearer`), and the
// extension the OpenID Connect provider takes to be the API's authorization server
// (`provides.apiAuthorization`, host/authorization.ts). It opens before the OpenID Connect
// feature, which attaches its signing keys and grant store to the extension.
//
// Its code is loaded when it opens: the schema (and the kigo command) read its migrations
// without loading the rest.
import type { GatewayFeature } from '../host/feature.js'
import { oauth2Migrations } from './migrations.js'

export const oauth2Feature: GatewayFeature = {
  name: 'oauth2',
  migrations: oauth2Migrations,
  async open({ config, database, redis, users, lookup, replay, audit, account, now, logger }) {
    const [{ openOAuth2 }, { oauth2AppsAdminApi }, { registerOperatorIntrospection }, { registerTurnOnPages }, { pageErrors }, { hostsOf }] = await Promise.all([
      import('./index.js'),
      import('./admin-api.js'),
      import('./introspection.js'),
      import('./account-pages.js'),
      import('../account-area/host.js'),
      import('../../common/deployment.js'),
    ])
    // The token exchange verifies OAuth 1.0a signatures as the API does: the same look-up, replay cache and options.
    const oauth1 = { lookup, replay: replay.oauth, oauth: { windowSeconds: config.auth.timestampWindowSeconds, hmacSha256: config.auth.hmacSha256, plaintext: config.auth.plaintext }, audit }
    // Every gateway refuses a revoked grant's tokens (revocations.ts).
    const oauth2 = openOAuth2({ config, db: database, redis, users, oauth1, now, ...(logger ? { log: (message: string, err?: Error) => logger.warn({ err: err && { message: err.message } }, message) } : {}) })
    await oauth2.revocations.start()
    return {
      // OAuth 2.0 turned on for one's own OAuth 1.0a application (docs/oauth2.md#for-an-oauth-10a-application).
      async publicRoutes(app) {
        const area = await account.mount(app)
        app.answerErrorsAs(pageErrors)
        registerTurnOnPages(app, { area, applications: oauth2.applications, consumers: users, audit })
      },
      // OAuth 2.0 turned on for an application, and the operator's introspection of an access token.
      async operatorRoutes(api) {
        await oauth2AppsAdminApi(api, { applications: oauth2.applications, audit })
        registerOperatorIntrospection(api, { verifier: oauth2.verifier, hosts: hostsOf(config) })
      },
      provides: { bearer: oauth2.bearer, apiAuthorization: oauth2.authorization },
      async close() {
        oauth2.revocations.close()
      },
    }
  },
}
