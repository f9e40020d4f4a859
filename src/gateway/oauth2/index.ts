// OAuth 2.0 for the API (docs/oauth2.md): the services a gateway opens for it. The
// authorization server is the OpenID Connect provider (oidc/provider.ts takes
// authorization-server.ts's configuration); the gateway takes Bearer tokens (bearer.ts).
import type { Config } from '../../common/config.js'
import { hostsOf } from '../../common/deployment.js'
import type { RedisClient } from '../../common/redis.js'
import type { Db } from '../../common/sql.js'
import type { OidcStore, SigningKey } from '../oidc/store.js'
import type { User } from '../store/types.js'
import { AccessTokenVerifier } from './access-token.js'
import type { ApiAuthorizationDeps } from './authorization-server.js'
import { bearerAuthenticator, type BearerAuthenticator } from './bearer.js'
import { RevocationList } from './revocations.js'
import { apiAccessTokenSeconds } from './scopes.js'

export interface OAuth2Services {
  revocations: RevocationList
  bearer: BearerAuthenticator
  /** What the provider needs for the API's tokens at revocation and introspection. */
  api: ApiAuthorizationDeps
}

export function openOAuth2(o: {
  config: Pick<Config, 'auth' | 'domesticHost' | 'globalHost' | 'publicScheme' | 'domesticHostAliases' | 'globalHostAliases'>
  db: Db
  redis?: RedisClient | undefined
  oidcStore: OidcStore
  /** The provider's current signing keys (they rotate; OidcProviders polls them). */
  keys: () => readonly SigningKey[]
  users: { getUser(id: string): Promise<User | null> }
  now: () => number
  log?: (message: string, err?: Error) => void
}): OAuth2Services {
  const revocations = new RevocationList({ db: o.db, redis: o.redis, tokenLifetimeSeconds: apiAccessTokenSeconds, now: o.now, ...(o.log ? { log: o.log } : {}) })
  // Every grant the store revokes (the library's revocations and reuse of a spent refresh
  // token, the account page, a deleted client) is put on the list.
  o.oidcStore.onGrantsRevoked = (grantIds) => revocations.revoke(grantIds)
  const verifier = new AccessTokenVerifier(o.keys, revocations, o.now)
  return {
    revocations,
    bearer: bearerAuthenticator({ realm: o.config.auth.realm, hosts: hostsOf(o.config), verifier, users: o.users }),
    api: { verifier, revokeGrant: (grantId) => o.oidcStore.revokeGrant(grantId) },
  }
}

export { RevocationList } from './revocations.js'
export type { BearerAuthenticator } from './bearer.js'
