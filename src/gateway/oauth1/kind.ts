// OAuth applications as the registrations' lifecycle names them (src/gateway/registrations/lifecycle.ts):
// audit actions `app.*`, pages under /account/apps.
import type { RegistrationKind } from '../registrations/lifecycle.js'

export const applicationKind: RegistrationKind = { name: 'app', auditKind: 'app', accountBase: '/account/apps', slot: 'app', param: 'key' }
