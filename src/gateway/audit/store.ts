// The audit trail (migration 30): every change an operator makes through the operator
// API (policy, users, applications, tokens, dashboard sessions), with when, what, the state before and after,
// and the client address. Shared by all gateways through the gateway's store.
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

export interface AuditInput {
  kind: AuditKind
  /** What was done, e.g. `app.rotate_secret`. */
  action: string
  /** The user ID, consumer key, token or legacy method changed. */
  target: string
  before: unknown
  after: unknown
  /** The address the request came from. */
  address: string
}

export interface AuditEvent extends AuditInput {
  id: number
  at: Date
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
  action: string
  kind: AuditKind
  target: string
  before: unknown
  after: unknown
}

/** PGlite and pg both parse jsonb; a string here would be a double-encoded value. */
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v))

export class AuditStore {
  constructor(private readonly db: Db) {}

  async record(event: AuditInput): Promise<void> {
    await this.db.query(
      `INSERT INTO kigo_gateway.audit_log (address, action, kind, target, before, after) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)`,
      [event.address, event.action, event.kind, event.target, json(event.before), json(event.after)],
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
      `SELECT id, at, address, action, kind, target, before, after FROM kigo_gateway.audit_log
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
      params,
    )
    return rows.map((r) => ({
      id: Number(r.id),
      at: r.at instanceof Date ? r.at : new Date(r.at),
      address: r.address,
      action: r.action,
      kind: r.kind,
      target: r.target,
      before: r.before ?? null,
      after: r.after ?? null,
    }))
  }
}
