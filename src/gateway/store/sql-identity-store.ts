// The identity store over the SQL layer (docs/gateway.md#topology, docs/gateway.md#the-oauth-provider-and-the-account-pages):
// users and web sessions; the OAuth 1.0a applications and tokens are src/gateway/oauth1/store.ts's,
// on the same database. One class for the embedded and the PostgreSQL engine, every name schema-qualified. Secrets are sealed or hashed before
// they reach SQL (crypto.ts) and generated here with randomToken.
import type { Db, Queryable } from '../../common/sql.js'
import type { ProvisionedUser } from '../../common/user-provisioning.js'
import { createHash } from 'node:crypto'
import { randomToken } from '../../common/secrets.js'
import { SecretBox, dummyPasswordHash, hashPassword, verifyPassword } from './crypto.js'
import {
  checkEmail,
  checkName,
  checkPassword,
  checkNewUserId,
  checkUserId,
  isPlausibleKey,
  limits,
  reservedUserIds,
} from './validation.js'
import { Conflict, NotFound, applicationStoreMethods, type ApplicationStore, type IdentityStore, type User, type UserContact, type WebSession } from './types.js'
import { userIdPattern } from '../domain/identifiers.js'

/** What changed, so that caches of this process (CachedCredentialLookup) drop it at once. */
export type IdentityChange = { kind: 'user'; id: string } | { kind: 'consumer'; key: string } | { kind: 'token'; token: string }

export interface IdentityChangeSource {
  /** Calls `listener` after each committed change; returns the unsubscribe function. */
  onChange(listener: (change: IdentityChange) => void): () => void
}

// Sizes of generated values (base64url of random bytes): session ids and CSRF tokens,
// well above guessing range.
const secretBytes = 32

/** Values that are only ever compared (verifiers, session ids) are stored as their SHA-256. */
const sha256 = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex')

// Associated data binding each sealed value to its row (crypto.ts).
const aad = {
  apiPassword: (userId: string) => `users.api_password:${userId}`,
  csrfToken: (idHash: string) => `web_sessions.csrf_token:${idHash}`,
  shownSecret: (idHash: string, slot: string) => `web_sessions.shown_secret:${idHash}:${slot}`,
}

interface UserRow {
  id: string
  name: string
  created_at: Date
}

const userColumns = 'id, name, created_at'

const toUser = (r: UserRow): User => ({ id: r.id, name: r.name, createdAt: new Date(r.created_at) })

/** A lookup id that cannot name a stored user is answered without a query. */
const isUserId = (id: unknown): id is string => typeof id === 'string' && userIdPattern.test(id)

/** What the applications' store is built on: the identity store's database, sealing and change announcements. */
export interface IdentityStoreBase {
  db: Db
  box: SecretBox
  changed: (change: IdentityChange) => void
}

/** Opens the applications' store on the identity store's base (src/gateway/identity.ts gives OAuth 1.0a's). */
export type ApplicationStoreFactory = (base: IdentityStoreBase) => ApplicationStore

export interface SqlIdentityStoreOptions {
  /** KIGO_SECRET_KEY (32 bytes, base64). */
  secretKey: string
  /** Close the Db when the store is closed (true when the store opened it). */
  ownsDb?: boolean
  /** The applications and tokens (OAuth 1.0a); without it, those calls are refused. */
  applications?: ApplicationStoreFactory
}

/**
 * The applications and tokens of OAuth 1.0a are kept by their own store on the same
 * database (src/gateway/oauth1/store.ts, given as `applications`); this class answers for
 * them too (one IdentityStore for the verifiers, the operator API and the kigo CLI) by
 * handing each such call to it.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface SqlIdentityStore extends ApplicationStore {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SqlIdentityStore implements IdentityStore, IdentityChangeSource {
  private readonly box: SecretBox
  private readonly listeners = new Set<(change: IdentityChange) => void>()
  /** The OAuth 1.0a applications and tokens (src/gateway/oauth1/), or null when none was given. */
  readonly applications: ApplicationStore | null

  constructor(
    private readonly db: Db,
    private readonly options: SqlIdentityStoreOptions,
  ) {
    this.box = new SecretBox(options.secretKey)
    const applications = options.applications?.({ db, box: this.box, changed: (change) => this.changed(change) }) ?? null
    this.applications = applications
    for (const name of applicationStoreMethods) {
      const value = applications ? applications[name].bind(applications) : () => Promise.reject(new Error('this identity store was opened without the applications store'))
      Object.defineProperty(this, name, { value, writable: true, configurable: true })
    }
  }

  private sendUsers: (() => Promise<unknown>) | undefined

  /**
   * docs/gateway.md#registered-users-in-the-core: what a registration or a rename waits for
   * once committed, the send of the users the core lacks (CoreUserSync, which bounds it).
   * A failed send is retried there; the change stands.
   */
  sendUsersWith(send: () => Promise<unknown>): void {
    this.sendUsers = send
  }

  private async usersSent(): Promise<void> {
    await this.sendUsers?.().catch(() => undefined)
  }

  onChange(listener: (change: IdentityChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Called after the change committed: a failing listener must not make the write look failed. */
  private changed(change: IdentityChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch {
        // A cache that failed to drop an entry still expires it by TTL.
      }
    }
  }

  // ---- users ---------------------------------------------------------------------------

  async createUser(input: { id: string; name: string; password: string; apiPassword: string }): Promise<User> {
    const id = checkNewUserId(input.id)
    const name = checkName(input.name)
    const password = checkPassword(input.password)
    const apiPassword = checkPassword(input.apiPassword, 'apiPassword')
    const passwordHash = await hashPassword(password)
    // ON CONFLICT without a target covers the primary key and the case-folded index.
    const rows = await this.db.query<UserRow>(
      `INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING RETURNING ${userColumns}`,
      [id, name, passwordHash, this.box.seal(apiPassword, aad.apiPassword(id))],
    )
    if (rows.length === 0) throw new Conflict(`user id ${id} is already taken`)
    this.changed({ kind: 'user', id })
    await this.usersSent()
    return toUser(rows[0]!)
  }

  async setUserName(id: string, name: string): Promise<{ before: string; user: User } | null> {
    const value = checkName(name)
    if (!isUserId(id)) return null
    // The old name is read in the same statement; an unchanged name raises no version.
    const rows = await this.db.query<UserRow & { before: string }>(
      `UPDATE kigo_gateway.users u SET name = $2, name_version = u.name_version + CASE WHEN u.name = $2 THEN 0 ELSE 1 END
       FROM (SELECT id, name AS before FROM kigo_gateway.users WHERE id = $1) old
       WHERE u.id = old.id RETURNING u.id, u.name, u.created_at, old.before`,
      [id, value],
    )
    if (rows.length === 0) return null
    this.changed({ kind: 'user', id })
    await this.usersSent()
    return { before: rows[0]!.before, user: toUser(rows[0]!) }
  }

  /** Users the core has not acknowledged at their current name, by ID (docs/gateway.md#registered-users-in-the-core). */
  async usersForCore(limit: number): Promise<ProvisionedUser[]> {
    const rows = await this.db.query<{ id: string; name: string; name_version: string }>(
      'SELECT id, name, name_version FROM kigo_gateway.users WHERE core_version < name_version ORDER BY id LIMIT $1',
      [limit],
    )
    return rows.map((r) => ({ id: r.id, name: r.name, version: Number(r.name_version) }))
  }

  /** Records that the core holds these users at these versions (never lowering what it held). */
  async coreHasUsers(users: readonly ProvisionedUser[]): Promise<void> {
    if (users.length === 0) return
    await this.db.query(
      `UPDATE kigo_gateway.users u SET core_version = GREATEST(u.core_version, v.version)
       FROM unnest($1::text[], $2::bigint[]) AS v (id, version) WHERE u.id = v.id`,
      [users.map((u) => u.id), users.map((u) => String(u.version))],
    )
  }

  async getUser(id: string): Promise<User | null> {
    if (!isUserId(id)) return null
    const rows = await this.db.query<UserRow>(`SELECT ${userColumns} FROM kigo_gateway.users WHERE id = $1`, [id])
    return rows[0] ? toUser(rows[0]) : null
  }

  async verifyLoginPassword(id: string, password: string): Promise<User | null> {
    const plausible = isUserId(id) && typeof password === 'string' && password.length <= limits.passwordLength
    const rows = plausible
      ? await this.db.query<UserRow & { password_hash: string }>(
          `SELECT ${userColumns}, password_hash FROM kigo_gateway.users WHERE id = $1`,
          [id],
        )
      : []
    const row = rows[0]
    // An unknown id costs one scrypt run too, so timing does not tell which ids exist.
    const matches = await verifyPassword(plausible ? password : '', row ? row.password_hash : await dummyPasswordHash())
    return row && matches ? toUser(row) : null
  }

  async getApiPassword(id: string): Promise<{ user: User; apiPassword: string } | null> {
    if (!isUserId(id)) return null
    const rows = await this.db.query<UserRow & { api_password: string }>(
      `SELECT ${userColumns}, api_password FROM kigo_gateway.users WHERE id = $1`,
      [id],
    )
    const row = rows[0]
    if (!row) return null
    return { user: toUser(row), apiPassword: this.box.open(row.api_password, aad.apiPassword(row.id)) }
  }

  async setApiPassword(id: string, apiPassword: string): Promise<boolean> {
    const plain = checkPassword(apiPassword, 'apiPassword')
    if (!isUserId(id)) return false
    const rows = await this.db.query(`UPDATE kigo_gateway.users SET api_password = $2 WHERE id = $1 RETURNING id`, [
      id,
      this.box.seal(plain, aad.apiPassword(id)),
    ])
    if (rows.length === 0) return false
    this.changed({ kind: 'user', id })
    return true
  }

  async setLoginPassword(id: string, password: string): Promise<boolean> {
    const plain = checkPassword(password)
    if (!isUserId(id)) return false
    const rows = await this.db.query(`UPDATE kigo_gateway.users SET password_hash = $2 WHERE id = $1 RETURNING id`, [id, await hashPassword(plain)])
    if (rows.length === 0) return false
    this.changed({ kind: 'user', id })
    return true
  }

  async endUserSessions(userId: string, keepSessionId?: string): Promise<number> {
    if (!isUserId(userId)) return 0
    const keep = keepSessionId !== undefined && isPlausibleKey(keepSessionId) ? sha256(keepSessionId) : ''
    const rows = await this.db.query(`DELETE FROM kigo_gateway.web_sessions WHERE user_id = $1 AND id_hash <> $2 RETURNING id_hash`, [userId, keep])
    return rows.length
  }

  async listUsers(): Promise<UserContact[]> {
    const rows = await this.db.query<UserRow & { email: string | null }>(`SELECT ${userColumns}, email FROM kigo_gateway.users ORDER BY id`)
    return rows.map((r) => ({ ...toUser(r), email: r.email }))
  }

  /**
   * Users whose IDs are now reserved (docs/api.md#pages): made before the ID was, they keep
   * working but their public pages cannot be reached. By ID.
   */
  async usersWithReservedIds(): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>('SELECT id FROM kigo_gateway.users WHERE lower(id) = ANY ($1::text[]) ORDER BY id', [[...reservedUserIds]])
    return rows.map((r) => r.id)
  }

  async getUserEmail(id: string): Promise<string | null> {
    if (!isUserId(id)) return null
    const rows = await this.db.query<{ email: string | null }>(`SELECT email FROM kigo_gateway.users WHERE id = $1`, [id])
    return rows[0]?.email ?? null
  }

  async setUserEmail(id: string, email: string | null): Promise<boolean> {
    const value = email === null ? null : checkEmail(email)
    if (!isUserId(id)) return false
    const rows = await this.db.query(`UPDATE kigo_gateway.users SET email = $2 WHERE id = $1 RETURNING id`, [id, value])
    return rows.length > 0
  }

  // ---- web sessions (account area) ---------------------------------------------------

  async createWebSession(input: { userId: string | null; expiresAt: Date; now: Date }): Promise<{ id: string; csrfToken: string }> {
    if (input.userId !== null) checkUserId(input.userId)
    const id = randomToken(secretBytes)
    const csrfToken = randomToken(secretBytes)
    const idHash = sha256(id)
    await this.db.transaction(async (tx: Queryable) => {
      await tx.query(`DELETE FROM kigo_gateway.web_sessions WHERE expires_at < $1`, [input.now])
      const rows = await tx.query(
        `INSERT INTO kigo_gateway.web_sessions (id_hash, user_id, csrf_token, created_at, expires_at)
         SELECT $1, $2::text, $3, $4, $5 WHERE $2::text IS NULL OR EXISTS (SELECT 1 FROM kigo_gateway.users WHERE id = $2::text)
         RETURNING id_hash`,
        [idHash, input.userId, this.box.seal(csrfToken, aad.csrfToken(idHash)), input.now, input.expiresAt],
      )
      if (rows.length === 0) throw new NotFound(`no user ${JSON.stringify(input.userId)}`)
    })
    return { id, csrfToken }
  }

  async getWebSession(id: string, now: Date): Promise<WebSession | null> {
    if (!isPlausibleKey(id)) return null
    const idHash = sha256(id)
    const rows = await this.db.query<{ user_id: string | null; name: string | null; user_created_at: Date | null; csrf_token: string; created_at: Date; expires_at: Date }>(
      `SELECT s.user_id, u.name, u.created_at AS user_created_at, s.csrf_token, s.created_at, s.expires_at
       FROM kigo_gateway.web_sessions s LEFT JOIN kigo_gateway.users u ON u.id = s.user_id
       WHERE s.id_hash = $1 AND s.expires_at > $2`,
      [idHash, now],
    )
    const row = rows[0]
    if (!row) return null
    return {
      user: row.user_id === null ? null : toUser({ id: row.user_id, name: row.name ?? row.user_id, created_at: row.user_created_at ?? row.created_at }),
      csrfToken: this.box.open(row.csrf_token, aad.csrfToken(idHash)),
      createdAt: new Date(row.created_at),
      expiresAt: new Date(row.expires_at),
    }
  }

  async deleteWebSession(id: string): Promise<void> {
    if (!isPlausibleKey(id)) return
    await this.db.query(`DELETE FROM kigo_gateway.web_sessions WHERE id_hash = $1`, [sha256(id)])
  }

  async holdShownSecret(id: string, slot: string, value: string, expiresAt: Date): Promise<void> {
    if (!isPlausibleKey(id)) return
    const idHash = sha256(id)
    await this.db.query(`UPDATE kigo_gateway.web_sessions SET shown_slot = $2, shown_secret = $3, shown_expires_at = $4 WHERE id_hash = $1`, [idHash, slot, this.box.seal(value, aad.shownSecret(idHash, slot)), expiresAt])
  }

  async takeShownSecret(id: string, slot: string, now: Date): Promise<string | null> {
    if (!isPlausibleKey(id)) return null
    const idHash = sha256(id)
    // One statement reads and clears it: of two gateways opening the page at once, one shows it.
    const rows = await this.db.query<{ shown_secret: string; shown_expires_at: Date }>(
      `WITH held AS (SELECT id_hash, shown_secret, shown_expires_at FROM kigo_gateway.web_sessions WHERE id_hash = $1 AND shown_slot = $2 FOR UPDATE)
       UPDATE kigo_gateway.web_sessions s SET shown_slot = NULL, shown_secret = NULL, shown_expires_at = NULL
       FROM held WHERE s.id_hash = held.id_hash
       RETURNING held.shown_secret, held.shown_expires_at`,
      [idHash, slot],
    )
    const row = rows[0]
    if (!row || new Date(row.shown_expires_at).getTime() <= now.getTime()) return null
    return this.box.open(row.shown_secret, aad.shownSecret(idHash, slot))
  }

  // ---- lifecycle -----------------------------------------------------------------------

  ping(): Promise<void> {
    return this.db.ping()
  }

  async close(): Promise<void> {
    this.listeners.clear()
    if (this.options.ownsDb) await this.db.close()
  }
}
