// The operator API for users, applications and access tokens (docs/gateway.md#the-operator-api-and-dashboard, docs/operations.md#operator-command-line), on the
// operator port behind admin-auth. JSON in, JSON out; every error is
// {"error":{"status","code","message"}}. Plain secrets (passwords, consumer and token
// secrets) appear only in the response that creates them.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { ErrorArea } from '../../common/error-answers.js'
import { ApiError, errors } from '../../common/errors.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { randomToken } from '../../common/secrets.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { InvalidInput } from '../store/validation.js'
import { Conflict, NotFound, type IdentityAdministration } from '../store/types.js'
import type { AdminChange, AdminRouteOptions } from '../registrations/admin-routes.js'
import { strictValidatorCompiler } from '../registrations/route-schemas.js'
import { adminUsers } from './admin-users.js'

export type { AdminChange } from '../registrations/admin-routes.js'
export { describeSchemaError } from '../registrations/route-schemas.js'

export interface AdminApiOptions {
  store: IdentityAdministration
  /** Called after each committed mutation; a throwing listener does not fail the request. */
  onChange?: (change: AdminChange) => void
  /** Bytes of randomness in a generated login or API password (base64url); default 18. */
  passwordBytes?: number
  /** Where each change is recorded (src/gateway/audit/store.ts); none: not recorded. */
  audit?: Pick<AuditStore, 'record'>
  /** Clock in milliseconds (default Date.now): a rotated secret's overlap ends from it. */
  now?: () => number
  /** A user's new contact e-mail waiting for confirmation, shown with the user. */
  pendingEmail?: AdminRouteOptions['pendingEmail']
  registrationClosed?: AdminRouteOptions['registrationClosed']
}

// ---- errors ----------------------------------------------------------------------------

/** The users, applications and tokens API's answers: the identity store's refusals, then the classifier. */
const identityErrors: ErrorArea = operatorErrorArea({
  known: (err) => err instanceof Conflict ? new ApiError(409, 'conflict', err.message)
    : err instanceof NotFound ? new ApiError(404, 'not_found', err.message)
      : err instanceof InvalidInput ? new ApiError(400, 'invalid_parameter', err.message)
        : undefined,
  unavailable: () => errors.unavailable('store_unavailable', 'The identity store is unavailable; try again shortly'),
})

// ---- routes ----------------------------------------------------------------------------

/**
 * Makes `app` a scope of the identity administration (users here, OAuth 1.0a's
 * applications and tokens in their feature): the strict TypeBox validator, the identity
 * store's refusals as answers, no caching of answers that may carry a secret once; and
 * gives the options its groups of routes take.
 */
export function identityAdminScope(app: FastifyInstance, options: AdminApiOptions): AdminRouteOptions {
  const { store } = options
  const passwordBytes = options.passwordBytes ?? 18
  const newPassword = () => randomToken(passwordBytes)

  // The audit trail follows the committed change; a failed write is logged, never the
  // request's failure (the operator already holds its result, perhaps a secret shown once).
  const audited = auditTrail(options.audit, app.log)

  const changed = (change: AdminChange) => {
    try {
      options.onChange?.(change)
    } catch (err) {
      // The mutation is committed; a stale cache entry still expires by itself.
      app.log.warn({ err, change: change.kind }, 'operator API change listener failed')
    }
  }

  app.setValidatorCompiler(strictValidatorCompiler)
  app.answerErrorsAs(identityErrors)
  // Responses may carry secrets once; no cache may keep them.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
  return { store, newPassword, audited, changed, now: options.now ?? Date.now, ...(options.pendingEmail ? { pendingEmail: options.pendingEmail } : {}), ...(options.registrationClosed ? { registrationClosed: options.registrationClosed } : {}) }
}

export async function adminApi(instance: FastifyInstance, options: AdminApiOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  // One group per resource, each in this context (its validator, errors and no-store).
  await app.register(adminUsers, identityAdminScope(app, options))
}

export default adminApi
