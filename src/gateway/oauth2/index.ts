// OAuth 2.0 for the API (docs/oauth2.md): the services a gateway opens for it. The
// authorization server is the OpenID Connect provider (oidc/provider.ts takes
// authorization-server.ts's configuration); the gateway takes Bearer tokens (bearer.ts).
import type { Config } from '../../common/config.js'
import { hostsOf } from '../../common/deployment.js'
import type { RedisClient } from '../../common/redis.js'
import type { Db } from '../../common/sql.js'
import type { OidcStore, SigningKey } from '../oidc/store.js'
import type { Consumer, User } from '../store/types.js'
import { OAuth2Applications } from './applications.js'
import type { TokenExchangeDeps } from './exchange.js'
import { AccessTokenVerifier } from './access-token.js'
import type { ApiAuthorizationDeps } from './authorization-server.js'
import { bearerAuthenticator, type BearerAuthenticator } from './bearer.js'
import { RevocationList } from './revocations.js'
import { apiAccessTokenSeconds } from './scopes.js'

export interface OAuth2Services {
  revocations: RevocationList
  bearer: BearerAuthenticator
  /** What the provider needs for the API's tokens at revocation and introspection, and the token exchange. */
  api: ApiAuthorizationDeps
  /** OAuth 1.0a applications with OAuth 2.0 on, and their exchanged tokens. */
  applications: OAuth2Applications
}

export function openOAuth2(o: {
  config: Pick<Config, 'auth' | 'domesticHost' | 'globalHost' | 'publicScheme' | 'domesticHostAliases' | 'globalHostAliases'>
  db: Db
  redis: RedisClient | undefined
  oidcStore: OidcStore
  /** The provider's current signing keys (they rotate; OidcProviders polls them). */
  keys: () => readonly SigningKey[]
  users: { getUser(id: string): Promise<User | null>; getConsumer(key: string): Promise<{ consumer: Consumer } | null> }
  /** The OAuth 1.0a verifier's loads, replay cache and options: the token exchange checks its signature with them. */
  oauth1?: Omit<TokenExchangeDeps, 'applications' | 'revokeGrant' | 'now' | 'log'>
  now: () => number
  log?: (message: string, err?: Error) => void
}): OAuth2Services {
  const revocations = new RevocationList({ db: o.db, redis: o.redis, tokenLifetimeSeconds: apiAccessTokenSeconds, now: o.now, ...(o.log ? { log: o.log } : {}) })
  // Every grant the store revokes (the library's revocations and reuse of a spent refresh
  // token, the account page, a deleted client) is put on the list.
  o.oidcStore.onGrantsRevoked = (grantIds) => revocations.revoke(grantIds)
  const verifier = new AccessTokenVerifier(o.keys, revocations, o.now)
  const applications = new OAuth2Applications(o.db, o.oidcStore, o.users)
  const revokeGrant = (grantId: string) => o.oidcStore.revokeGrant(grantId)
  return {
    revocations,
    bearer: bearerAuthenticator({ realm: o.config.auth.realm, hosts: hostsOf(o.config), verifier, users: o.users }),
    api: { verifier, revokeGrant, ...(o.oauth1 ? { exchange: { ...o.oauth1, applications, revokeGrant, now: o.now, ...(o.log ? { log: o.log } : {}) } } : {}) },
    applications,
  }
}

export { RevocationList } from './revocations.js'
export { OAuth2Applications, OAuth2Refused } from './applications.js'
export type { BearerAuthenticator } from './bearer.js'
