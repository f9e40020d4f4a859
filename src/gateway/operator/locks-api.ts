// PUT and DELETE /admin/users/{id}/lock (`kigo users lock|unlock`): an operator's explicit
// decision to refuse a user's passwords (Basic, WSSE, account sign-in) from every address,
// and to lift it (docs/operations.md#user-locks). Each is logged and recorded in the audit
// trail; this gateway applies it at once, the others at their next refresh.
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import type { AuditStore } from '../audit/store.js'
import { userIdPattern } from '../domain/identifiers.js'
import { isoSeconds } from '../../common/time.js'
import type { UserLocks } from '../throttle/user-locks.js'
import { auditTrail, operatorActor } from '../audit/audited.js'

export interface LocksApiOptions {
  locks: Pick<UserLocks, 'store' | 'refresh'>
  audit?: Pick<AuditStore, 'record'>
  now: () => number
}

const defaultReason = 'locked by the operator'

function userIdOf(params: unknown): string {
  const id = (params as { id?: unknown }).id
  if (typeof id !== 'string' || !userIdPattern.test(id)) {
    throw new ApiError(400, 'invalid_parameter', 'Invalid path: "id" must be a user ID: 3 to 32 characters, a letter first, then letters, digits, "_" or "-"')
  }
  return id
}

function reasonOf(body: unknown): string {
  if (body === undefined || body === null || (typeof body === 'string' && body === '')) return defaultReason
  if (typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'invalid_parameter', 'Invalid request body: must be a JSON object')
  const extra = Object.keys(body).find((k) => k !== 'reason')
  if (extra !== undefined) throw new ApiError(400, 'invalid_parameter', `Invalid request body: unknown field "${extra}"`)
  const reason = (body as { reason?: unknown }).reason
  if (reason === undefined) return defaultReason
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 500 || /[\u0000-\u001f\u007f]/.test(reason)) {
    throw new ApiError(400, 'invalid_parameter', 'Invalid request body: "reason" must be one line of 1 to 500 characters')
  }
  return reason.trim()
}

export async function locksApi(app: FastifyInstance, options: LocksApiOptions): Promise<void> {
  const audited = auditTrail(options.audit, app.log)
  const record = (request: { ip: string }, action: string, target: string, before: unknown, after: unknown) =>
    audited(operatorActor(request), { kind: 'user', action, target, before, after })

  app.put('/admin/users/:id/lock', async (request, reply) => {
    const id = userIdOf(request.params)
    const reason = reasonOf(request.body)
    const lock = await options.locks.store.lock(id, reason, options.now())
    if (lock === null) throw new ApiError(404, 'user_not_found', `No user ${JSON.stringify(id)}`)
    await options.locks.refresh().catch(() => undefined)
    request.log.warn({ user: id, reason }, 'user locked by the operator')
    await record(request, 'user.lock', id, null, { locked: true, reason })
    return reply.header('cache-control', 'no-store').send({ id, locked: true, locked_at: isoSeconds(lock.lockedAt.getTime()), reason: lock.reason })
  })

  app.delete('/admin/users/:id/lock', async (request, reply) => {
    const id = userIdOf(request.params)
    const lifted = await options.locks.store.unlock(id)
    await options.locks.refresh().catch(() => undefined)
    if (lifted !== null) {
      request.log.warn({ user: id }, 'user unlocked by the operator')
      await record(request, 'user.unlock', id, { locked: true, reason: lifted.reason }, { locked: false })
    }
    return reply.header('cache-control', 'no-store').send({ id, locked: false, was_locked: lifted !== null })
  })
}
