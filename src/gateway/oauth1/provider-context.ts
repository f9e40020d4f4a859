// What the OAuth 1.0a provider's endpoints are given (provider.ts opens it; docs/gateway.md#the-oauth-provider-and-the-account-pages).
import type { AccountArea } from '../account-area/facade.js'
import type { OAuthVerifyOptions } from '../auth/oauth/verify.js'
import type { ReplayCache } from '../replay/types.js'
import type { CredentialRepository, ProviderRepository } from '../store/types.js'

/** The identity store's request tokens, access tokens and applications, as the endpoints read and write them. */
export type ProviderStore = ProviderRepository & Pick<CredentialRepository, 'getConsumer'>

/** What the endpoints are given: the identity store's applications and tokens, the account area, the verifier's rules. */
export interface ProviderContext {
  store: ProviderStore
  /** The account area as this scope sees it (the authorize step's sign-in and form). */
  area: AccountArea
  /** The OAuth replay cache the resource verifier uses (nonces are claimed in it alike). */
  replay: ReplayCache
  /** Lifetime of a request token, seconds (docs/gateway.md#the-oauth-provider-and-the-account-pages: 10 minutes). */
  requestTokenTtlSeconds: number
  realm: string
  verifyOptions: OAuthVerifyOptions
  now: () => number
}
