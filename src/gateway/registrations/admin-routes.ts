// What the operator API's route groups share (operator/admin-api.ts registers them, the
// OAuth 1.0a feature's among them): the schemas of
// user IDs, names, scopes and keys, the error body, the views' time format, the not-found
// answers, and the options each group is given.
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import type { Audited } from '../audit/audited.js'
import { scopes as allScopes, userIdPattern } from '../domain/identifiers.js'
import type { IdentityAdministration } from '../store/types.js'

/** What a mutation changed, so the gateway can drop cached credentials at once. */
export type AdminChange =
  | { kind: 'user'; userId: string }
  | { kind: 'api_password'; userId: string }
  | { kind: 'consumer'; consumerKey: string }
  | { kind: 'token'; token: string }

/** What each route group is given by the operator API (admin-api.ts). */
export interface AdminRouteOptions {
  store: IdentityAdministration
  /** A generated login or API password. */
  newPassword: () => string
  /** Records a committed change in the audit trail; a failed write is logged, never the request's failure. */
  audited: Audited
  /** Tells the listener what changed; a throwing listener does not fail the request. */
  changed: (change: AdminChange) => void
  /** The clock, in milliseconds (a rotation's overlap ends from it). */
  now: () => number
  /** A new contact e-mail waiting for its owner to open the link mailed to it (account-area/contact-email.ts). */
  pendingEmail?: (user: string, now: number) => Promise<{ email: string; expiresAt: Date } | null>
  /** Whether the oauth1 policy closed the registration of new OAuth 1.0a applications (policy/registration.ts). */
  registrationClosed?: () => boolean
}

/** The largest body a mutation takes. */
export const bodyLimit = 64 * 1024

const userIdMessage = 'must be a user ID: 3 to 32 characters, a letter first, then letters, digits, "_" or "-"'
export const UserId = Type.String({ pattern: userIdPattern.source, errorMessage: userIdMessage })
export const Name = Type.String({ minLength: 1, maxLength: 100 })
const ScopeName = Type.Enum([...allScopes])
export const ScopeList = Type.Array(ScopeName, { minItems: 1, maxItems: allScopes.length * 4 })
// Consumer keys and tokens are generated base64url; anything else cannot exist.
export const Key = Type.String({ minLength: 1, maxLength: 256 })
export const Timestamp = Type.String()

const ErrorBody = Type.Object({
  error: Type.Object({ status: Type.Integer(), code: Type.String(), message: Type.String() }),
})
export const errorResponses = { '4xx': ErrorBody, '5xx': ErrorBody }

export const userNotFound = (id: string) => new ApiError(404, 'user_not_found', `No user ${JSON.stringify(id)}`)
export const consumerNotFound = (key: string) => new ApiError(404, 'consumer_not_found', `No application with consumer key ${JSON.stringify(key)}`)
