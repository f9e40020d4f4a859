// Operator dashboard sessions (docs/security.md#operator-sessions), kept in the gateway's
// store so that every gateway of a deployment sees the same ones: a sign-out or a revoke
// at one gateway ends the session at all of them.
//
// Design choices:
// - The cookie holds 32 random bytes; the store holds their SHA-256 only, so reading the
//   table yields no usable session.
// - Each row is bound to the admin token in force when it began (an HMAC of the token
//   under a key derived from KIGO_SECRET_KEY, so the table does not help guess the token).
//   A gateway started with another admin token accepts none of the older sessions, and
//   its next sign-in deletes them: changing KIGO_ADMIN_TOKEN ends every session.
// - Expired and foreign-bound rows are deleted at each sign-in; there is no timer.
import { createHash, createHmac } from 'node:crypto'
import { deriveKey, randomToken } from '../../common/secrets.js'
import type { Db } from '../../common/sql.js'

/** The cookie's value: 32 random bytes, base64url. */
const tokenShape = /^[A-Za-z0-9_-]{43}$/

const sha256 = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex')

/** The binding of sessions to `adminToken` (see the header). */
export function adminTokenBinding(secretKey: string, adminToken: string): string {
  return createHmac('sha256', deriveKey(secretKey, 'operator session binding')).update(adminToken, 'utf8').digest('base64url')
}

export class OperatorSessionStore {
  constructor(private readonly db: Db) {}

  /** A new session for `lifetimeSeconds`; returns the cookie's value (never stored). */
  async create(binding: string, now: number, lifetimeSeconds: number): Promise<string> {
    const token = randomToken(32)
    await this.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM kigo_gateway.operator_sessions WHERE expires_at <= $1 OR binding <> $2`, [new Date(now), binding])
      await tx.query(
        `INSERT INTO kigo_gateway.operator_sessions (id_hash, binding, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
        [sha256(token), binding, new Date(now), new Date(now + lifetimeSeconds * 1000)],
      )
    })
    return token
  }

  /** Whether `token` is a live session bound to `binding`. */
  async valid(token: string | undefined, binding: string, now: number): Promise<boolean> {
    if (token === undefined || !tokenShape.test(token)) return false
    const rows = await this.db.query(
      `SELECT 1 FROM kigo_gateway.operator_sessions WHERE id_hash = $1 AND binding = $2 AND expires_at > $3`,
      [sha256(token), binding, new Date(now)],
    )
    return rows.length > 0
  }

  /** Ends one session (sign-out); nothing when there is none. */
  async end(token: string | undefined): Promise<void> {
    if (token === undefined || !tokenShape.test(token)) return
    await this.db.query(`DELETE FROM kigo_gateway.operator_sessions WHERE id_hash = $1`, [sha256(token)])
  }

  /** Ends every session; returns how many were live. */
  async revokeAll(now: number): Promise<number> {
    const rows = await this.db.query<{ expires_at: Date | string }>(`DELETE FROM kigo_gateway.operator_sessions RETURNING expires_at`)
    return rows.filter((r) => new Date(r.expires_at).getTime() > now).length
  }
}
