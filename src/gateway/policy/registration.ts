// Registration of new OAuth 1.0a applications, closed by the oauth1 policy
// (docs/gateway.md#oauth-10a-as-a-legacy-method): the first step of retiring a method
// that applications (not people) use. Existing applications keep working; the places that
// create one (the account page's form, POST /admin/apps and so `kigo apps add`) ask
// `PolicyService.registrationClosed('oauth1')` and answer in these words, which point to
// OAuth 2.0. Registering an OAuth 2.0 client is not closed by it.
import { ApiError } from '../../common/errors.js'

/** Where a developer reads how to use OAuth 2.0 instead (the developer guide). */
export const oauth2GuidePath = '/developers#oauth2'

/** Why a new OAuth 1.0a application cannot be registered, and what to do instead. */
export const registrationClosedText =
  'New OAuth 1.0a applications can no longer be registered: OAuth 1.0a is being retired. Register an OAuth 2.0 client instead (authorization code with PKCE, or the device flow for tools without a browser); applications registered before keep working.'

/** The operator API's answer to a new OAuth 1.0a application while registration is closed. */
export const registrationClosedError = (): ApiError =>
  new ApiError(403, 'registration_closed', `${registrationClosedText} The OAuth 2.0 guide: ${oauth2GuidePath}. Reopen with kigo policy set oauth1 <state> --open-registration.`)
