// What the OAuth 1.0a feature keeps (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// applications (consumers), access tokens, request tokens and a user's authorized
// applications. The verifiers read consumers and tokens through the cached credential
// lookup (store/credential-lookup.ts), which takes any CredentialRepository.
import type { ApplicationStore } from '../store/types.js'

/** The OAuth 1.0a store: the identity store's methods about applications and their tokens. */
export type OAuth1Store = ApplicationStore
