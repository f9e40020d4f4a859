// GET /admin/audit: the audit trail of operator changes (src/gateway/audit/store.ts),
// newest first. Filters: kind (policy, user, app, token), target (a user ID, consumer
// key, token or legacy method), since (ISO 8601), limit (1 to 1000, default 100).
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { auditKinds, type AuditEvent, type AuditKind, type AuditStore } from '../audit/store.js'
import { InvalidPolicy, parseInstant } from '../policy/normalize.js'
import { isoSeconds } from '../policy/time.js'
import { instantPattern } from '../policy/types.js'
import { sendOperatorError } from './policy-api.js'

export interface AuditApiOptions {
  audit: Pick<AuditStore, 'list'>
}

const allowed = new Set(['kind', 'target', 'since', 'limit'])
const instant = new RegExp(instantPattern)
const bad = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid query: ${message}`)

export function auditEventView(e: AuditEvent) {
  return { id: e.id, at: isoSeconds(e.at.getTime()), address: e.address, kind: e.kind, action: e.action, target: e.target, before: e.before, after: e.after }
}

export async function auditApi(app: FastifyInstance, options: AuditApiOptions): Promise<void> {
  app.setErrorHandler((err, request, reply) => sendOperatorError(request, reply, err))

  app.get('/admin/audit', async (request, reply) => {
    const query = request.query as Record<string, unknown>
    for (const key of Object.keys(query)) if (!allowed.has(key)) throw bad(`unknown parameter "${key}" (use kind, target, since, limit)`)
    const one = (name: string): string | undefined => {
      const v = query[name]
      if (v === undefined) return undefined
      if (typeof v !== 'string') throw bad(`"${name}" may be given once`)
      return v
    }
    const kind = one('kind')
    if (kind !== undefined && !(auditKinds as readonly string[]).includes(kind)) throw bad(`"kind" must be one of ${auditKinds.join(', ')}`)
    const target = one('target')
    if (target !== undefined && (target === '' || target.length > 256)) throw bad('"target" must have 1 to 256 characters')
    const sinceText = one('since')
    let since: number | undefined
    if (sinceText !== undefined) {
      if (!instant.test(sinceText)) throw bad('"since" must be an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T00:00:00Z')
      try {
        since = parseInstant(sinceText, 'since')
      } catch (err) {
        if (err instanceof InvalidPolicy) throw bad(err.message)
        throw err
      }
    }
    const limitText = one('limit')
    if (limitText !== undefined && !/^[1-9][0-9]{0,3}$/.test(limitText)) throw bad('"limit" must be a whole number from 1 to 1000')
    const limit = limitText === undefined ? 100 : Number(limitText)
    if (limit > 1000) throw bad('"limit" must be a whole number from 1 to 1000')
    const events = await options.audit.list({
      ...(kind !== undefined ? { kind: kind as AuditKind } : {}),
      ...(target !== undefined ? { target } : {}),
      ...(since !== undefined ? { since } : {}),
      limit,
    })
    return reply.header('cache-control', 'no-store').send({ events: events.map(auditEventView) })
  })
}
