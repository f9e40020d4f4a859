// PUT and DELETE /admin/users/{id}/lock (`kigo users lock|unlock`): an operator's explicit
// decision to refuse a user's passwords (Basic, WSSE, account sign-in) from every address,
// and to lift it (docs/operations.md#user-locks). Each is logged and recorded in the audit
// trail; this gateway applies it at once, the others at their next refresh.
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import type { AuditStore } from '../audit/store.js'
import { Compile, Type } from '../../common/typebox.js'
import { UserId } from '../registrations/admin-routes.js'
import { describeSchemaError, strictValidatorCompiler } from '../registrations/route-schemas.js'
import { isoSeconds } from '../../common/time.js'
import type { UserLocks } from '../throttle/user-locks.js'
import { auditTrail, operatorActor } from '../audit/audited.js'

export interface LocksApiOptions {
  locks: Pick<UserLocks, 'store' | 'refresh'>
  audit?: Pick<AuditStore, 'record'>
  now: () => number
}

const defaultReason = 'locked by the operator'

/** The path's user. */
const LockParams = Type.Object({ id: UserId }, { additionalProperties: false })

/** The body, when there is one: an optional reason, one line. */
const LockBody = Type.Object(
  { reason: Type.Optional(Type.String({ pattern: '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]{1,500}$', errorMessage: 'must be one line of 1 to 500 characters' })) },
  { additionalProperties: false },
)
const checkBody = Compile(LockBody)

/** The reason of a lock: the body's, or the default when there is no body or no reason; a 400 naming the field otherwise. */
function reasonOf(body: unknown): string {
  if (body === undefined || body === null || body === '') return defaultReason
  if (!checkBody.Check(body)) throw new ApiError(400, 'invalid_parameter', describeSchemaError([...checkBody.Errors(body)], 'body', LockBody))
  return body.reason?.trim() ?? defaultReason
}

export async function locksApi(app: FastifyInstance, options: LocksApiOptions): Promise<void> {
  app.setValidatorCompiler(strictValidatorCompiler)
  const audited = auditTrail(options.audit, app.log)
  const record = (request: { ip: string }, action: string, target: string, before: unknown, after: unknown) =>
    audited(operatorActor(request), { kind: 'user', action, target, before, after })

  app.put<{ Params: { id: string } }>('/admin/users/:id/lock', { schema: { params: LockParams } }, async (request, reply) => {
    const { id } = request.params
    const reason = reasonOf(request.body)
    const lock = await options.locks.store.lock(id, reason, options.now())
    if (lock === null) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(id)}`)
    await options.locks.refresh().catch(() => undefined)
    request.log.warn({ user: id, reason }, 'user locked by the operator')
    await record(request, 'user.lock', id, null, { locked: true, reason })
    return reply.header('cache-control', 'no-store').send({ id, locked: true, locked_at: isoSeconds(lock.lockedAt.getTime()), reason: lock.reason })
  })

  app.delete<{ Params: { id: string } }>('/admin/users/:id/lock', { schema: { params: LockParams } }, async (request, reply) => {
    const { id } = request.params
    const lifted = await options.locks.store.unlock(id)
    await options.locks.refresh().catch(() => undefined)
    if (lifted !== null) {
      request.log.warn({ user: id }, 'user unlocked by the operator')
      await record(request, 'user.unlock', id, { locked: true, reason: lifted.reason }, { locked: false })
    }
    return reply.header('cache-control', 'no-store').send({ id, locked: false, was_locked: lifted !== null })
  })
}
