// OpenID Connect clients as the registrations' lifecycle names them (src/gateway/registrations/lifecycle.ts):
// the provider's clients of host/authorization.ts, where the oauth2 feature finds them too.
export { providerClientKind as oidcClientKind } from '../host/authorization.js'
