// Operator locks on users (docs/security.md#throttling, docs/operations.md#user-locks):
// the one way a user is locked out everywhere, an explicit decision made with
// `kigo users lock ID` (PUT /admin/users/{id}/lock, audited and logged) and lifted with
// `kigo users unlock ID`. Kept in the gateway's store, so every gateway applies it.
//
// Design choices:
// - Locks are few (each one an operator's decision), so every gateway holds the whole set
//   in memory and answers `locked` without waiting: the throttle's verdict stays
//   synchronous on the hot path. The set is read at start-up and polled every `refreshMs`
//   (the migration policy's interval); the gateway that made a change reads it at once.
// - A failed refresh keeps the last set read (a lock is not lifted by a database outage).
import type { Db } from '../../common/sql.js'

export interface UserLock {
  userId: string
  lockedAt: Date
  reason: string
}

export class UserLockStore {
  constructor(private readonly db: Db) {}

  /** Locks `userId` (again: the new reason and time replace the old); null when there is no such user. */
  async lock(userId: string, reason: string, now: number): Promise<UserLock | null> {
    const rows = await this.db.query<{ user_id: string; locked_at: Date | string; reason: string }>(
      `INSERT INTO kigo_gateway.user_locks (user_id, locked_at, reason)
       SELECT id, $2, $3 FROM kigo_gateway.users WHERE id = $1
       ON CONFLICT (user_id) DO UPDATE SET locked_at = EXCLUDED.locked_at, reason = EXCLUDED.reason
       RETURNING user_id, locked_at, reason`,
      [userId, new Date(now), reason],
    )
    const row = rows[0]
    return row ? { userId: row.user_id, lockedAt: new Date(row.locked_at), reason: row.reason } : null
  }

  /** Lifts the lock; the lock that was lifted, or null when there was none. */
  async unlock(userId: string): Promise<UserLock | null> {
    const rows = await this.db.query<{ user_id: string; locked_at: Date | string; reason: string }>(
      `DELETE FROM kigo_gateway.user_locks WHERE user_id = $1 RETURNING user_id, locked_at, reason`,
      [userId],
    )
    const row = rows[0]
    return row ? { userId: row.user_id, lockedAt: new Date(row.locked_at), reason: row.reason } : null
  }

  async list(): Promise<UserLock[]> {
    const rows = await this.db.query<{ user_id: string; locked_at: Date | string; reason: string }>(
      `SELECT user_id, locked_at, reason FROM kigo_gateway.user_locks ORDER BY user_id`,
    )
    return rows.map((r) => ({ userId: r.user_id, lockedAt: new Date(r.locked_at), reason: r.reason }))
  }
}

export interface UserLocksOptions {
  /** How often the set is read again; default 5000 ms. */
  refreshMs?: number
  onRefreshError?: (err: unknown) => void
}

/** The locked users as this gateway applies them. */
export class UserLocks {
  #locked = new Set<string>()
  #timer: NodeJS.Timeout | undefined

  constructor(
    readonly store: UserLockStore,
    private readonly options: UserLocksOptions = {},
  ) {}

  async start(): Promise<void> {
    await this.refresh()
    this.#timer = setInterval(() => {
      this.refresh().catch((err) => this.options.onRefreshError?.(err))
    }, this.options.refreshMs ?? 5000)
    this.#timer.unref()
  }

  async refresh(): Promise<void> {
    this.#locked = new Set((await this.store.list()).map((l) => l.userId))
  }

  locked(userId: string): boolean {
    return this.#locked.has(userId)
  }

  close(): void {
    clearInterval(this.#timer)
  }
}
