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
import type { ApiAuthorization, GrantHooks, ProviderClients, ProviderSigningKey } from '../host/authorization.js'
import type { Consumer, User } from '../store/types.js'
import { OAuth2Applications } from './applications.js'
import type { TokenExchangeDeps } from './exchange.js'
import { AccessTokenVerifier } from './access-token.js'
import { apiAuthorizationConfiguration, apiScopesProperty, clientGrantTypes, deviceCodeSeconds, deviceRoute, installApiAuthorization, metadataPath, type ApiAuthorizationDeps } from './authorization-server.js'
import { bearerAuthenticator } from './bearer.js'
import { RevocationList } from './revocations.js'
import { apiAccessTokenSeconds } from './scopes.js'

export interface OAuth2Services {
  revocations: RevocationList
  bearer: BearerAuthenticator
  /** The extension the OpenID Connect provider takes. */
  authorization: ApiAuthorization
  /** OAuth 1.0a applications with OAuth 2.0 on, and their exchanged tokens. */
  applications: OAuth2Applications
  /** The access tokens' check, as Bearer makes it (the operator's introspection asks it too). */
  verifier: AccessTokenVerifier
}

export function openOAuth2(o: {
  config: Pick<Config, 'auth' | 'domesticHost' | 'globalHost' | 'publicScheme' | 'domesticHostAliases' | 'globalHostAliases'>
  db: Db
  redis?: RedisClient | undefined
  users: { getUser(id: string): Promise<User | null>; getConsumer(key: string): Promise<{ consumer: Consumer } | null> }
  /** The OAuth 1.0a verifier's loads, replay cache and options: the token exchange checks its signature with them. */
  oauth1?: Omit<TokenExchangeDeps, 'applications' | 'revokeGrant' | 'now' | 'log'>
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
  // The provider's clients, once attached: an OAuth 1.0a application that turns OAuth 2.0 on gets one.
  let clients: ProviderClients | null = null
  const attached = (): ProviderClients => {
    if (clients === null) throw new Error('the OpenID Connect provider has not attached its clients')
    return clients
  }
  const applications = new OAuth2Applications(o.db, {
    createClient: (input) => attached().createClient(input),
    deleteClient: (clientId) => attached().deleteClient(clientId),
    findClient: (clientId) => attached().findClient(clientId),
  }, o.users)
  const api: ApiAuthorizationDeps = { verifier, revokeGrant, ...(o.oauth1 ? { exchange: { ...o.oauth1, applications, revokeGrant, now: o.now, ...(o.log ? { log: o.log } : {}) } } : {}) }
  const authorization: ApiAuthorization = {
    apiScopesProperty,
    grantTypes: clientGrantTypes(api),
    deviceRoute,
    deviceCodeSeconds,
    metadataPath,
    configuration: apiAuthorizationConfiguration,
    install: (provider, library) => installApiAuthorization(provider, library, api),
    attach(late) {
      keys = late.keys
      grants = late.grants
      clients = late.clients
      // Every grant the store revokes (the library's revocations and reuse of a spent refresh
      // token, the account page, a deleted client) is put on the list.
      grants.onGrantsRevoked = (grantIds) => revocations.revoke(grantIds)
    },
  }
  return {
    revocations,
    bearer: bearerAuthenticator({ realm: o.config.auth.realm, hosts: hostsOf(o.config), verifier, users: o.users }),
    authorization,
    applications,
    verifier,
  }
}

export { RevocationList } from './revocations.js'
