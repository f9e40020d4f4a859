// GET /admin/audit: the audit trail (src/gateway/audit/store.ts), newest first, each
// change with who made it (`by`: `operator`, or `user ID` for a user's own change) and from where. Filters: kind (policy, user, app, token), target (a user ID, consumer
// key, token or legacy method), since (ISO 8601), limit (1 to 1000, default 100).
import type { FastifyInstance } from 'fastify'
import { auditKinds, type AuditEvent, type AuditKind, type AuditStore } from '../audit/store.js'
import { isoSeconds } from '../../common/time.js'
import { queryFilters } from './query-filters.js'
import { actorName } from '../audit/audited.js'

export interface AuditApiOptions {
  audit: Pick<AuditStore, 'list'>
}


export function auditEventView(e: AuditEvent) {
  return { id: e.id, at: isoSeconds(e.at.getTime()), by: actorName(e.actor), address: e.address, kind: e.kind, action: e.action, target: e.target, before: e.before, after: e.after }
}

export async function auditApi(app: FastifyInstance, options: AuditApiOptions): Promise<void> {
  app.get('/admin/audit', async (request, reply) => {
    const filters = queryFilters(request.query as Record<string, unknown>, ['kind', 'target', 'since', 'limit'])
    const kind = filters.oneOf<AuditKind>('kind', auditKinds)
    const target = filters.text('target', 256)
    const since = filters.instant('since')
    const limit = filters.count('limit', 1000) ?? 100
    const events = await options.audit.list({
      ...(kind !== undefined ? { kind } : {}),
      ...(target !== undefined ? { target } : {}),
      ...(since !== undefined ? { since } : {}),
      limit,
    })
    return reply.header('cache-control', 'no-store').send({ events: events.map(auditEventView) })
  })
}
