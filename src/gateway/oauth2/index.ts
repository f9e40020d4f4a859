// OAuth 2.0 for the API (docs/oauth2.md): the services a gateway opens for it. The
// authorization server is the OpenID Connect provider, which takes this feature's
// extension (host/authorization.ts, built from authorization-server.ts) and attaches its
// keys and grant store once its providers are built; the gateway takes Bearer tokens
// (bearer.ts).
import type { Config } from '../../common/config.js'
import { hostsOf } from '../../common/deployment.js'
import type { RedisClient } from '../../common/redis.js'
import type { Db } from '../../common/sql.js'
import type { BearerAuthenticator } from '../auth/authenticate.js'
import type { ApiAuthorization, GrantHooks, ProviderSigningKey } from '../host/authorization.js'
import type { User } from '../store/types.js'
import { AccessTokenVerifier } from './access-token.js'
import { apiAuthorizationConfiguration, apiScopesProperty, deviceCodeSeconds, deviceRoute, installApiAuthorization, metadataPath } from './authorization-server.js'
import { bearerAuthenticator } from './bearer.js'
import { RevocationList } from './revocations.js'
import { apiAccessTokenSeconds } from './scopes.js'

export interface OAuth2Services {
  revocations: RevocationList
  bearer: BearerAuthenticator
  /** The extension the OpenID Connect provider takes. */
  authorization: ApiAuthorization
}

export function openOAuth2(o: {
  config: Pick<Config, 'auth' | 'domesticHost' | 'globalHost' | 'publicScheme' | 'domesticHostAliases' | 'globalHostAliases'>
  db: Db
  redis?: RedisClient | undefined
  users: { getUser(id: string): Promise<User | null> }
  now: () => number
  log?: (message: string, err?: Error) => void
}): OAuth2Services {
  const revocations = new RevocationList({ db: o.db, redis: o.redis, tokenLifetimeSeconds: apiAccessTokenSeconds, now: o.now, ...(o.log ? { log: o.log } : {}) })
  // The provider's current signing keys (they rotate; its feature polls them) and its grant
  // store, once the OpenID Connect feature attaches them: no key verifies a token before.
  let keys: () => readonly ProviderSigningKey[] = () => []
  let grants: GrantHooks | null = null
  const verifier = new AccessTokenVerifier(() => keys(), revocations, o.now)
  const revokeGrant = async (grantId: string) => {
    if (grants === null) throw new Error('the OpenID Connect provider has not attached its grant store')
    await grants.revokeGrant(grantId)
  }
  const authorization: ApiAuthorization = {
    apiScopesProperty,
    deviceRoute,
    deviceCodeSeconds,
    metadataPath,
    configuration: apiAuthorizationConfiguration,
    install: (provider) => installApiAuthorization(provider, { verifier, revokeGrant }),
    attach(late) {
      keys = late.keys
      grants = late.grants
      // Every grant the store revokes (the library's revocations and reuse of a spent refresh
      // token, the account page, a deleted client) is put on the list.
      grants.onGrantsRevoked = (grantIds) => revocations.revoke(grantIds)
    },
  }
  return {
    revocations,
    bearer: bearerAuthenticator({ realm: o.config.auth.realm, hosts: hostsOf(o.config), verifier, users: o.users }),
    authorization,
  }
}

export { RevocationList } from './revocations.js'
