// The operator API for users, applications and access tokens (docs/gateway.md#the-operator-api-and-dashboard, docs/operations.md#operator-command-line), on the
// operator port behind admin-auth. JSON in, JSON out; every error is
// {"error":{"status","code","message"}}. Plain secrets (passwords, consumer and token
// secrets) appear only in the response that creates them.
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Compile, type TSchema } from '../../common/typebox.js'
import type { ErrorArea } from '../../common/error-answers.js'
import { ApiError, errors } from '../../common/errors.js'
import { operatorErrorArea } from '../../common/operator-errors.js'
import { randomToken } from '../../common/secrets.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { InvalidInput } from '../store/validation.js'
import { Conflict, NotFound, type IdentityAdministration } from '../store/types.js'
import type { AdminChange, AdminRouteOptions } from '../registrations/admin-routes.js'
import { adminUsers } from './admin-users.js'

export type { AdminChange } from '../registrations/admin-routes.js'

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

// ---- validation ------------------------------------------------------------------------

interface SchemaError {
  keyword: string
  instancePath: string
  schemaPath: string
  params: Record<string, unknown>
  message: string
}

const partNames: Record<string, string> = { body: 'request body', querystring: 'query', params: 'path', headers: 'headers' }

/** The schema node a schemaPath (`#/properties/x/items`) points at. */
function nodeAt(schema: unknown, schemaPath: string): Record<string, unknown> | undefined {
  let node = schema
  for (const key of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined
}

/** One sentence for the first meaningful schema error, naming the field. */
export function describeSchemaError(errors: SchemaError[], part: string, schema: unknown): string {
  // `additionalProperties: false` reports a "schema is false" error beside the useful one.
  const error = errors.find((e) => e.keyword !== 'boolean') ?? errors[0]
  const where = partNames[part] ?? part
  if (!error) return `Invalid ${where}`
  const field = error.instancePath.slice(1).replace(/\/([0-9]+)(?=\/|$)/g, '[$1]').replaceAll('/', '.')
  const p = error.params
  switch (error.keyword) {
    case 'required': {
      const name = (p.requiredProperties as string[] | undefined)?.[0] ?? '?'
      return `Invalid ${where}: "${field === '' ? name : `${field}.${name}`}" is required`
    }
    case 'additionalProperties': {
      const name = (p.additionalProperties as string[] | undefined)?.[0] ?? '?'
      return `Invalid ${where}: unknown ${part === 'body' ? 'field' : 'parameter'} "${name}"`
    }
  }
  let what: string
  switch (error.keyword) {
    case 'type':
      what = field === '' && part === 'body' ? 'must be a JSON object' : `must be ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}`
      break
    case 'enum':
      what = `must be one of ${(p.allowedValues as unknown[]).join(', ')}`
      break
    case 'minLength':
      what = p.limit === 1 ? 'must not be empty' : `must have at least ${String(p.limit)} characters`
      break
    case 'maxLength':
      what = `must have at most ${String(p.limit)} characters`
      break
    case 'minItems':
      what = `must list at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`
      break
    case 'maxItems':
      what = `must list at most ${String(p.limit)} items`
      break
    default: {
      const custom = nodeAt(schema, error.schemaPath)?.errorMessage
      what = typeof custom === 'string' ? custom : error.message
    }
  }
  // A union (`callback`: string or null) reports each branch; name the useful one.
  if (error.keyword === 'anyOf' || error.keyword === 'const') what = 'has an invalid value'
  return `Invalid ${where}: ${field === '' ? 'value' : `"${field}"`} ${what}`
}

/**
 * TypeBox's compiled checker as the route validator: no type coercion and no silently
 * dropped fields (every input here is a string or a list of strings already), and a 400
 * naming the field on failure.
 */
const strictValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema)
  return (value: unknown) => {
    if (check.Check(value)) return { value }
    const message = describeSchemaError(check.Errors(value), httpPart ?? 'body', schema)
    return { error: new ApiError(400, 'invalid_parameter', message) }
  }
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
