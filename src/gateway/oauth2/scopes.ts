// OAuth 2.0 for the API (docs/oauth2.md): the API's scopes, which are OAuth 1.0a's, and the
// one resource (RFC 8707) a deployment's access tokens are for.
import { scopes, type Scope } from '../domain/identifiers.js'

export const apiScopes: readonly Scope[] = scopes

export const isApiScope = (value: string): value is Scope => (apiScopes as readonly string[]).includes(value)

/** The API's resource indicator, and its access tokens' audience: `{base_url}/api`, one per deployment. */
export const apiResource = (issuer: string): string => `${issuer}/api`

/** How long an access token for the API lives, seconds (one hour). */
export const apiAccessTokenSeconds = 60 * 60

/** The private claim of an API access token naming its grant (revoking the grant revokes the token). */
export const grantClaim = 'kigo_grant'
