// OAuth 2.0 for the API (docs/oauth2.md) as the host knows it: the OpenID Connect
// provider is the API's authorization server, and the two features meet here, not in
// each other's folders. The oauth2 feature offers the `ApiAuthorization` extension
// (`Provisions.apiAuthorization`); the OpenID Connect feature, which opens after it, builds
// its providers with the extension's configuration and then attaches what the extension
// needs from it (the signing keys, the grant store's hooks).
import type Provider from 'oidc-provider'
import type { KoaContextWithOIDC } from 'oidc-provider'
import type { RegistrationKind } from '../registrations/lifecycle.js'

/**
 * Where the OpenID Connect feature leaves, on the request it hands the provider, the public
 * host the client sent (lower-cased): the provider itself is told the deployment's main
 * host, on every alias, but an OAuth 1.0a signature (the token exchange's) is over the URL
 * the client used, as on the API.
 */
export const requestedHost = Symbol('kigo requested host')

/** A signing key of the provider, as the extension reads it: its private JWK (the public half is published). */
export interface ProviderSigningKey {
  jwk: Record<string, unknown>
}

/** The part of the `oidc-provider` library the extension uses. */
export interface ProviderLibrary {
  errors: Record<string, new (...args: never[]) => Error>
}

/** The grant store's hooks the extension uses: told of every revoked grant, and revoking one. */
export interface GrantHooks {
  /** Set by the extension: called with every grant the store revokes. */
  onGrantsRevoked: ((grantIds: string[]) => Promise<void>) | null
  /** Revokes a grant with its codes and tokens, on every gateway. */
  revokeGrant(grantId: string): Promise<void>
}

/** A client of the provider as the extension reads it. */
export interface ProviderClient {
  clientId: string
  name: string
  ownerId: string
  redirectUris: string[]
  public: boolean
  apiScopes: string[]
  createdAt: Date
}

/**
 * The provider's clients as the registrations' lifecycle names them: audit actions
 * `oidc_client.*` (filed under kind `oidc`), pages under /account/oidc-clients. The OpenID
 * Connect feature serves those pages; an OAuth 1.0a application that turns OAuth 2.0 on
 * sends its owner to its new client's page, which shows the client secret once.
 */
export const providerClientKind: RegistrationKind = { name: 'oidc_client', auditKind: 'oidc', accountBase: '/account/oidc-clients', slot: 'oidc', param: 'id' }

/** The provider's clients, as far as the extension makes and removes them. */
export interface ProviderClients {
  createClient(input: { name: string; ownerId: string; redirectUris: string[]; public: boolean; apiScopes?: readonly string[] }): Promise<{ client: ProviderClient; secret: string | null }>
  deleteClient(clientId: string): Promise<unknown>
  findClient(clientId: string): Promise<ProviderClient | null>
}

/** What the extension adds to one provider's configuration. */
export interface ApiAuthorizationConfiguration {
  /** Spread into the configuration's features: resource indicators, device flow, revocation, introspection. */
  features: Record<string, Record<string, unknown>>
  rotateRefreshToken: boolean
  extraTokenClaims: (ctx: KoaContextWithOIDC, token: { grantId?: string; resourceServer?: { audience?: string } }) => Promise<Record<string, string> | undefined>
  /** Whether a code (or device code) grants the API: its refresh token needs no offline_access. */
  grantsApi(code: { resource?: string | string[] }): boolean
}

/** The API's authorization on the OpenID Connect provider (the oauth2 feature). */
export interface ApiAuthorization {
  /** Where a client's metadata, as the provider's adapter gives it, carries its API scopes (space-separated). */
  readonly apiScopesProperty: string
  /** The device flow's page for people, at the deployment's root. */
  readonly deviceRoute: string
  /** How long a device code waits for its user, seconds. */
  readonly deviceCodeSeconds: number
  /** The RFC 8414 metadata's path. */
  readonly metadataPath: string
  /** What the provider of `issuer` adds to its configuration; `sendPage` answers with a page of the account area. */
  configuration(library: ProviderLibrary, issuer: string, sendPage: (ctx: KoaContextWithOIDC, document: string) => void): ApiAuthorizationConfiguration
  /** The grant types every client may use (the token exchange among them when it is offered). */
  readonly grantTypes: readonly string[]
  /** Installs the provider's middleware for the API (metadata, the API's tokens at revocation and introspection) and the token exchange's grant. */
  install(provider: Provider, library: ProviderLibrary): void
  /**
   * Hands over what the provider's feature holds, once its providers are built: the current
   * signing keys (they rotate), the grant store, and its clients (an OAuth 1.0a application
   * that turns OAuth 2.0 on gets one).
   */
  attach(late: { keys: () => readonly ProviderSigningKey[]; grants: GrantHooks; clients: ProviderClients }): void
}
