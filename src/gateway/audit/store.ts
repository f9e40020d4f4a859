// The audit trail (migrations 30 and 36): every change an operator makes through the
// operator API (policy, users, applications, tokens, dashboard sessions) and every change
// a user makes on their own account pages, with when, who (the actor), what, the state
// before and after, and the client address. Shared by all gateways through the gateway's
// store. Changes are recorded through audited.ts.
//
// Design choices:
// - Secrets never enter it: callers pass views without secrets (an API password reset is
//   recorded as the event alone, with neither value).
// - Recording follows the change and is not in its transaction: a failed audit write is
//   logged and the change stands (the operator already has the answer, e.g. a secret
//   shown once). An operator who needs a gap-free trail reads the log lines as well.
import type { Db } from '../../common/sql.js'

export const auditKinds = ['policy', 'user', 'app', 'token', 'session', 'site', 'oidc'] as const
export type AuditKind = (typeof auditKinds)[number]

/**
 * Who made a change: the operator (operator API, `kigo`, the dashboard), or a user on
 * their own account pages; with the client address it came from.
 */
export type AuditActor = { kind: 'operator'; address: string } | { kind: 'user'; user: string; address: string }

/** What changed: its kind, the action, its target, and the state before and after (never a secret). */
export interface AuditChange {
  kind: AuditKind
  /** What was done, e.g. `app.rotate_secret`. */
  action: string
  /** The user ID, consumer key, token, site, client or legacy method changed. */
  target: string
  before: unknown
  after: unknown
}

export interface AuditInput extends AuditChange {
  /** Who made the change, and the address the request came from. */
  actor: AuditActor
}

export interface AuditEvent extends AuditChange {
  id: number
  at: Date
  actor: AuditActor
  /** The address the request came from (the actor's). */
  address: string
}

export interface AuditFilter {
  kind?: AuditKind
  target?: string
  /** Events at or after this instant (ms). */
  since?: number
  limit?: number
}

interface AuditRow {
  id: string | number
  at: Date | string
  address: string
  actor: string
  action: string
  kind: AuditKind
  target: string
  before: unknown
  after: unknown
}

/** PGlite and pg both parse jsonb; a string here would be a double-encoded value. */
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v))

/** The actor column: `operator`, or `user:ID` (migration 36). */
const actorColumn = (actor: AuditActor) => (actor.kind === 'user' ? `user:${actor.user}` : 'operator')
const actorOf = (column: string, address: string): AuditActor =>
  column.startsWith('user:') ? { kind: 'user', user: column.slice('user:'.length), address } : { kind: 'operator', address }

export class AuditStore {
  constructor(private readonly db: Db) {}

  async record(event: AuditInput): Promise<void> {
    await this.db.query(
      `INSERT INTO kigo_gateway.audit_log (address, actor, action, kind, target, before, after) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)`,
      [event.actor.address, actorColumn(event.actor), event.action, event.kind, event.target, json(event.before), json(event.after)],
    )
  }

  /** Newest first. */
  async list(filter: AuditFilter = {}): Promise<AuditEvent[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.kind !== undefined) {
      params.push(filter.kind)
      where.push(`kind = $${params.length}`)
    }
    if (filter.target !== undefined) {
      params.push(filter.target)
      where.push(`target = $${params.length}`)
    }
    if (filter.since !== undefined) {
      params.push(new Date(filter.since).toISOString())
      where.push(`at >= $${params.length}::timestamptz`)
    }
    params.push(filter.limit ?? 100)
    const rows = await this.db.query<AuditRow>(
      `SELECT id, at, address, actor, action, kind, target, before, after FROM kigo_gateway.audit_log
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    )
    return rows.map((r) => ({
      id: Number(r.id),
      at: r.at instanceof Date ? r.at : new Date(r.at),
      address: r.address,
      actor: actorOf(r.actor, r.address),
      action: r.action,
      kind: r.kind,
      target: r.target,
      before: r.before ?? null,
      after: r.after ?? null,
    }))
  }
}
