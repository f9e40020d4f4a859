// GET /admin/audit: the audit trail (src/gateway/audit/store.ts), newest first, each
// change with who made it (`by`: `operator`, or `user ID` for a user's own change) and from where. Filters: kind (policy, user, app, token), target (a user ID, consumer
// key, token or legacy method), since (ISO 8601), limit (1 to 1000, default 100).
import type { FastifyInstance } from 'fastify'
import { auditKinds, type AuditEvent, type AuditStore } from '../audit/store.js'
import { isoSeconds } from '../../common/time.js'
import { Type, type Static } from '../../common/typebox.js'
import { strictValidatorCompiler } from '../registrations/route-schemas.js'
import { count, instant, oneOf, queryCount, queryInstant, text } from './query-filters.js'
import { actorName } from '../audit/audited.js'

export interface AuditApiOptions {
  audit: Pick<AuditStore, 'list'>
}


export function auditEventView(e: AuditEvent) {
  return { id: e.id, at: isoSeconds(e.at.getTime()), by: actorName(e.actor), address: e.address, kind: e.kind, action: e.action, target: e.target, before: e.before, after: e.after }
}

const AuditQuery = Type.Object({
  kind: Type.Optional(oneOf(auditKinds)),
  target: Type.Optional(text(256)),
  since: Type.Optional(instant),
  limit: Type.Optional(count(1000)),
}, { additionalProperties: false })

export async function auditApi(app: FastifyInstance, options: AuditApiOptions): Promise<void> {
  app.setValidatorCompiler(strictValidatorCompiler)
  app.get('/admin/audit', { schema: { querystring: AuditQuery } }, async (request, reply) => {
    const { kind, target, since, limit } = request.query as Static<typeof AuditQuery>
    const sinceMs = queryInstant(since, 'since')
    const events = await options.audit.list({
      ...(kind !== undefined ? { kind } : {}),
      ...(target !== undefined ? { target } : {}),
      ...(sinceMs !== undefined ? { since: sinceMs } : {}),
      limit: queryCount(limit) ?? 100,
    })
    return reply.header('cache-control', 'no-store').send({ events: events.map(auditEventView) })
  })
}
