// OpenID Connect clients as the registrations' lifecycle names them (src/gateway/registrations/lifecycle.ts):
// audit actions `oidc_client.*` (filed under kind `oidc`), pages under /account/oidc-clients.
import type { RegistrationKind } from '../registrations/lifecycle.js'

export const oidcClientKind: RegistrationKind = { name: 'oidc_client', auditKind: 'oidc', accountBase: '/account/oidc-clients', slot: 'oidc' }
