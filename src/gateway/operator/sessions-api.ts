// POST /admin/sessions/revoke (`kigo admin sessions revoke`): ends every operator dashboard
// session at once, at every gateway sharing the store (docs/security.md#operator-sessions).
// Recorded in the audit trail with the number ended; the bearer token itself is not a
// session and keeps working.
import type { FastifyInstance } from 'fastify'
import type { AuditStore } from '../audit/store.js'
import type { OperatorSessionStore } from './session-store.js'
import { auditTrail, operatorActor } from '../audit/audited.js'

export interface SessionsApiOptions {
  sessions: Pick<OperatorSessionStore, 'revokeAll'>
  audit?: Pick<AuditStore, 'record'>
  now: () => number
}

export async function sessionsApi(app: FastifyInstance, options: SessionsApiOptions): Promise<void> {

  app.post('/admin/sessions/revoke', async (request, reply) => {
    const revoked = await options.sessions.revokeAll(options.now())
    request.log.warn({ revoked }, 'every operator dashboard session revoked')
    await auditTrail(options.audit, request.log)(operatorActor(request), { kind: 'session', action: 'sessions.revoke', target: 'dashboard', before: { active: revoked }, after: { active: 0 } })
    return reply.header('cache-control', 'no-store').send({ revoked })
  })
}
