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
  async open({ config, database, redis, users, now, logger }) {
    const { openOAuth2 } = await import('./index.js')
    // Every gateway refuses a revoked grant's tokens (revocations.ts).
    const oauth2 = openOAuth2({ config, db: database, redis, users, now, ...(logger ? { log: (message: string, err?: Error) => logger.warn({ err: err && { message: err.message } }, message) } : {}) })
    await oauth2.revocations.start()
    return {
      provides: { bearer: oauth2.bearer, apiAuthorization: oauth2.authorization },
      async close() {
        oauth2.revocations.close()
      },
    }
  },
}
