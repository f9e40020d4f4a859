// The one way a change reaches the audit trail (docs/operations.md#the-audit-trail): who
// made it and from where (the actor), what was done to what, and the state before and
// after. Used by the operator API, the dashboard's actions and every account page.
// Recording follows the committed change: a failed write is logged, never the request's
// failure (the answer may already hold a secret shown once).
import type { FastifyBaseLogger } from 'fastify'
import type { AuditActor, AuditChange, AuditStore } from './store.js'

export type { AuditActor, AuditChange } from './store.js'

export type Audited = (actor: AuditActor, change: AuditChange) => Promise<void>

/** The operator, acting through a request to the operator port (its client address). */
export const operatorActor = (request: { ip: string }): AuditActor => ({ kind: 'operator', address: request.ip })

/** A user changing their own account, from `address` (the public origin's client address). */
export const userActor = (user: string, address: string): AuditActor => ({ kind: 'user', user, address })

/** How the dashboard and `kigo audit` name an actor: `user alice` or `operator`. */
export const actorName = (actor: Pick<AuditActor, 'kind'> & { user?: string }): string => (actor.kind === 'user' ? `user ${actor.user}` : 'operator')

/** `audited` for a trail (none: nothing is recorded), its failures logged on `log`. */
export function auditTrail(store: Pick<AuditStore, 'record'> | undefined, log: Pick<FastifyBaseLogger, 'warn'>): Audited {
  return async (actor, change) => {
    if (!store) return
    try {
      await store.record({ ...change, actor })
    } catch (err) {
      log.warn({ err: { message: (err as Error).message }, action: change.action, target: change.target }, 'audit record failed')
    }
  }
}
