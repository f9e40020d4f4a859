// The identity store over the SQL layer (docs/gateway.md#topology, docs/gateway.md#the-oauth-provider-and-the-account-pages): one class for the embedded and
// the PostgreSQL engine, every name schema-qualified. Secrets are sealed or hashed before
// they reach SQL (crypto.ts) and generated here with randomToken.
import type { Db, Queryable } from '../../common/sql.js'
import type { ProvisionedUser } from '../../common/user-provisioning.js'
import { createHash } from 'node:crypto'
import { randomToken, safeEqual } from '../../common/secrets.js'
import { newVerifier, normalizeVerifier } from './verifier-code.js'
import { SecretBox, dummyPasswordHash, hashPassword, verifyPassword } from './crypto.js'
import {
  InvalidInput,
  checkCallbackUrl,
  checkEmail,
  checkHomeUrl,
  checkName,
  checkPassword,
  checkScopes,
  checkNewUserId,
  checkUserId,
  isPlausibleKey,
  limits,
  reservedUserIds,
  scopesBeyondRegistration,
} from './validation.js'
import { Conflict, NotFound, type AccessToken, type AuthorizedApplication, type Consumer, type ConsumerDetails, type ExchangeResult, type IdentityStore, type RequestToken, type RequestTokenState, type User, type UserContact, type WebSession } from './types.js'
import { scopes as allScopes, userIdPattern, type Scope } from '../domain/identifiers.js'
import { storedPrevious, type PreviousSecret } from '../domain/secret-rotation.js'

/** What changed, so that caches of this process (CachedCredentialLookup) drop it at once. */
export type IdentityChange = { kind: 'user'; id: string } | { kind: 'consumer'; key: string } | { kind: 'token'; token: string }

export interface IdentityChangeSource {
  /** Calls `listener` after each committed change; returns the unsubscribe function. */
  onChange(listener: (change: IdentityChange) => void): () => void
}

// Sizes of generated values (base64url of random bytes): keys and tokens are public
// identifiers, secrets are HMAC keys (RFC 5849 §3.4.2), each well above guessing range.
const consumerKeyBytes = 18
const tokenBytes = 24
const secretBytes = 32
// A verifier is typed by hand in the oob flow: see verifier-code.ts.
const dayMs = 24 * 60 * 60 * 1000

/** Values that are only ever compared (verifiers, session ids) are stored as their SHA-256. */
const sha256 = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex')

// Associated data binding each sealed value to its row (crypto.ts).
const aad = {
  apiPassword: (userId: string) => `users.api_password:${userId}`,
  consumerSecret: (key: string) => `consumers.secret:${key}`,
  previousConsumerSecret: (key: string) => `consumers.previous_secret:${key}`,
  tokenSecret: (token: string) => `access_tokens.secret:${token}`,
  requestTokenSecret: (token: string) => `request_tokens.secret:${token}`,
  csrfToken: (idHash: string) => `web_sessions.csrf_token:${idHash}`,
  shownSecret: (idHash: string, slot: string) => `web_sessions.shown_secret:${idHash}:${slot}`,
}

interface UserRow {
  id: string
  name: string
  created_at: Date
}
interface ConsumerRow {
  key: string
  secret: string
  name: string
  owner_id: string
  scopes: string[]
  callback_url: string | null
  home_url: string | null
  created_at: Date
}
/** A replaced secret kept for a while (docs/gateway.md#rotating-a-secret), sealed; both null when there is none. */
interface PreviousSecretColumns {
  previous_secret: string | null
  previous_secret_expires_at: Date | string | null
}
interface TokenRow {
  token: string
  secret: string
  consumer_key: string
  user_id: string
  scopes: string[]
  created_at: Date
  revoked_at: Date | null
}

interface RequestTokenRow {
  token: string
  secret: string
  consumer_key: string
  callback: string
  scopes: string[]
  state: RequestTokenState
  user_id: string | null
  created_at: Date
  expires_at: Date
}

const userColumns = 'id, name, created_at'
const consumerColumns = 'key, secret, name, owner_id, scopes, callback_url, home_url, created_at'
const tokenColumns = 'token, secret, consumer_key, user_id, scopes, created_at, revoked_at'
const requestTokenColumns = 'token, secret, consumer_key, callback, scopes, state, user_id, created_at, expires_at'

const toUser = (r: UserRow): User => ({ id: r.id, name: r.name, createdAt: new Date(r.created_at) })
const toConsumer = (r: ConsumerRow): Consumer => ({
  key: r.key,
  name: r.name,
  ownerId: r.owner_id,
  scopes: r.scopes as Scope[],
  callbackUrl: r.callback_url,
  homeUrl: r.home_url,
  createdAt: new Date(r.created_at),
})
const toToken = (r: TokenRow): AccessToken => ({
  token: r.token,
  consumerKey: r.consumer_key,
  userId: r.user_id,
  scopes: r.scopes as Scope[],
  createdAt: new Date(r.created_at),
  revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
})

const toRequestToken = (r: RequestTokenRow): RequestToken => ({
  token: r.token,
  consumerKey: r.consumer_key,
  callback: r.callback,
  scopes: r.scopes as Scope[],
  state: r.state,
  userId: r.user_id,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
})

/** An application's name, callback and home page as the store keeps them: the one check of a registration and of an edit. */
function checkConsumerDetails(input: { name: string; callbackUrl: string | null; homeUrl?: string | null }): ConsumerDetails {
  return { name: checkName(input.name), callbackUrl: checkCallbackUrl(input.callbackUrl), homeUrl: checkHomeUrl(input.homeUrl) }
}

/** A lookup id that cannot name a stored user is answered without a query. */
const isUserId = (id: unknown): id is string => typeof id === 'string' && userIdPattern.test(id)

export interface SqlIdentityStoreOptions {
  /** KIGO_SECRET_KEY (32 bytes, base64). */
  secretKey: string
  /** Close the Db when the store is closed (true when the store opened it). */
  ownsDb?: boolean
}

export class SqlIdentityStore implements IdentityStore, IdentityChangeSource {
  private readonly box: SecretBox
  private readonly listeners = new Set<(change: IdentityChange) => void>()

  constructor(
    private readonly db: Db,
    private readonly options: SqlIdentityStoreOptions,
  ) {
    this.box = new SecretBox(options.secretKey)
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

  // ---- consumers -----------------------------------------------------------------------

  async createConsumer(input: {
    name: string
    ownerId: string
    scopes: Scope[]
    callbackUrl: string | null
    homeUrl?: string | null
  }): Promise<{ consumer: Consumer; secret: string }> {
    const { name, callbackUrl, homeUrl } = checkConsumerDetails(input)
    const scopes = checkScopes(input.scopes)
    if (!isUserId(input.ownerId)) throw new NotFound(`no user ${JSON.stringify(input.ownerId)}`)
    const key = randomToken(consumerKeyBytes)
    const secret = randomToken(secretBytes)
    // Inserting from the owner's row makes "owner exists" and the insert one statement.
    const rows = await this.db.query<ConsumerRow>(
      `INSERT INTO kigo_gateway.consumers (key, secret, name, owner_id, scopes, callback_url, home_url)
       SELECT $1, $2, $3, u.id, $5::text[], $6, $7 FROM kigo_gateway.users u WHERE u.id = $4
       RETURNING ${consumerColumns}`,
      [key, this.box.seal(secret, aad.consumerSecret(key)), name, input.ownerId, scopes, callbackUrl, homeUrl],
    )
    if (rows.length === 0) throw new NotFound(`no user ${input.ownerId}`)
    this.changed({ kind: 'consumer', key })
    return { consumer: toConsumer(rows[0]!), secret }
  }

  async getConsumer(key: string): Promise<{ consumer: Consumer; secret: string; previous?: PreviousSecret } | null> {
    if (!isPlausibleKey(key)) return null
    const rows = await this.db.query<ConsumerRow & PreviousSecretColumns>(
      `SELECT ${consumerColumns}, previous_secret, previous_secret_expires_at FROM kigo_gateway.consumers WHERE key = $1`,
      [key],
    )
    const row = rows[0]
    if (!row) return null
    const found = { consumer: toConsumer(row), secret: this.box.open(row.secret, aad.consumerSecret(row.key)) }
    const previous = storedPrevious(row.previous_secret, row.previous_secret_expires_at, (sealed) => this.box.open(sealed, aad.previousConsumerSecret(row.key)))
    return previous ? { ...found, previous } : found
  }

  async listConsumers(ownerId?: string): Promise<Consumer[]> {
    if (ownerId !== undefined && !isUserId(ownerId)) return []
    const rows =
      ownerId === undefined
        ? await this.db.query<ConsumerRow>(`SELECT ${consumerColumns} FROM kigo_gateway.consumers ORDER BY created_at, key`)
        : await this.db.query<ConsumerRow>(
            `SELECT ${consumerColumns} FROM kigo_gateway.consumers WHERE owner_id = $1 ORDER BY created_at, key`,
            [ownerId],
          )
    return rows.map(toConsumer)
  }

  async updateConsumer(key: string, details: ConsumerDetails): Promise<{ before: Consumer; after: Consumer } | null> {
    const { name, callbackUrl, homeUrl } = checkConsumerDetails(details)
    if (!isPlausibleKey(key)) return null
    const result = await this.db.transaction(async (tx: Queryable) => {
      // The row locked and read first: the audit's "before" is the state this edit replaced.
      const old = await tx.query<ConsumerRow>(`SELECT ${consumerColumns} FROM kigo_gateway.consumers WHERE key = $1 FOR UPDATE`, [key])
      if (!old[0]) return null
      const rows = await tx.query<ConsumerRow>(
        `UPDATE kigo_gateway.consumers SET name = $2, callback_url = $3, home_url = $4 WHERE key = $1 RETURNING ${consumerColumns}`,
        [key, name, callbackUrl, homeUrl],
      )
      return { before: toConsumer(old[0]), after: toConsumer(rows[0]!) }
    })
    if (result) this.changed({ kind: 'consumer', key })
    return result
  }

  async rotateConsumerSecret(key: string, options: { overlapSeconds?: number; now?: Date } = {}): Promise<{ consumer: Consumer; secret: string; previousUntil: Date | null } | null> {
    if (!isPlausibleKey(key)) return null
    const secret = randomToken(secretBytes)
    const overlapSeconds = options.overlapSeconds ?? 0
    let previousUntil = overlapSeconds > 0 ? new Date((options.now ?? new Date()).getTime() + overlapSeconds * 1000) : null
    const row = await this.db.transaction(async (tx: Queryable) => {
      // The row is locked while the old secret is read and moved: of two rotations at once,
      // the second keeps the first one's new secret as its previous one.
      const current = await tx.query<{ secret: string }>(`SELECT secret FROM kigo_gateway.consumers WHERE key = $1 FOR UPDATE`, [key])
      if (!current[0]) return null
      const previous = previousUntil === null ? null : this.box.reseal(current[0].secret, aad.consumerSecret(key), aad.previousConsumerSecret(key))
      if (previous === null) previousUntil = null
      const rows = await tx.query<ConsumerRow>(
        `UPDATE kigo_gateway.consumers SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4 WHERE key = $1 RETURNING ${consumerColumns}`,
        [key, this.box.seal(secret, aad.consumerSecret(key)), previous, previousUntil],
      )
      return rows[0] ?? null
    })
    if (!row) return null
    this.changed({ kind: 'consumer', key })
    return { consumer: toConsumer(row), secret, previousUntil }
  }

  async deleteConsumer(key: string): Promise<{ consumer: Consumer; tokens: number } | null> {
    if (!isPlausibleKey(key)) return null
    const result = await this.db.transaction(async (tx: Queryable) => {
      const tokens = await tx.query<{ token: string }>(`DELETE FROM kigo_gateway.access_tokens WHERE consumer_key = $1 RETURNING token`, [key])
      await tx.query(`DELETE FROM kigo_gateway.request_tokens WHERE consumer_key = $1`, [key])
      const rows = await tx.query<ConsumerRow>(`DELETE FROM kigo_gateway.consumers WHERE key = $1 RETURNING ${consumerColumns}`, [key])
      return rows[0] ? { consumer: toConsumer(rows[0]), tokens: tokens.map((t) => t.token) } : null
    })
    if (!result) return null
    this.changed({ kind: 'consumer', key })
    for (const token of result.tokens) this.changed({ kind: 'token', token })
    return { consumer: result.consumer, tokens: result.tokens.length }
  }

  // ---- access tokens -------------------------------------------------------------------

  async createAccessToken(input: { consumerKey: string; userId: string; scopes: Scope[] }): Promise<{ token: AccessToken; secret: string }> {
    const scopes = checkScopes(input.scopes)
    const token = randomToken(tokenBytes)
    const secret = randomToken(secretBytes)
    const sealed = this.box.seal(secret, aad.tokenSecret(token))
    const row = await this.db.transaction(async (tx: Queryable) => {
      const consumer = isPlausibleKey(input.consumerKey)
        ? (await tx.query<{ scopes: Scope[] }>(`SELECT scopes FROM kigo_gateway.consumers WHERE key = $1`, [input.consumerKey]))[0]
        : undefined
      if (!consumer) throw new NotFound(`no application with consumer key ${JSON.stringify(input.consumerKey)}`)
      const user = isUserId(input.userId)
        ? (await tx.query(`SELECT id FROM kigo_gateway.users WHERE id = $1`, [input.userId]))[0]
        : undefined
      if (!user) throw new NotFound(`no user ${JSON.stringify(input.userId)}`)
      // A token never carries more than its application registered (docs/gateway.md#the-oauth-provider-and-the-account-pages, initiate).
      const beyond = scopesBeyondRegistration(scopes, consumer.scopes)
      if (beyond !== null) throw new InvalidInput('scopes', `the application is ${beyond}`)
      const rows = await tx.query<TokenRow>(
        `INSERT INTO kigo_gateway.access_tokens (token, secret, consumer_key, user_id, scopes)
         VALUES ($1, $2, $3, $4, $5::text[]) RETURNING ${tokenColumns}`,
        [token, sealed, input.consumerKey, input.userId, scopes],
      )
      return rows[0]!
    })
    this.changed({ kind: 'token', token })
    return { token: toToken(row), secret }
  }

  async getAccessToken(token: string): Promise<{ token: AccessToken; secret: string } | null> {
    if (!isPlausibleKey(token)) return null
    const rows = await this.db.query<TokenRow>(`SELECT ${tokenColumns} FROM kigo_gateway.access_tokens WHERE token = $1`, [token])
    const row = rows[0]
    if (!row) return null
    return { token: toToken(row), secret: this.box.open(row.secret, aad.tokenSecret(row.token)) }
  }

  async revokeAccessToken(token: string): Promise<boolean> {
    if (!isPlausibleKey(token)) return false
    // COALESCE keeps the first revocation time when a token is revoked twice.
    const rows = await this.db.query(
      `UPDATE kigo_gateway.access_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE token = $1 RETURNING token`,
      [token],
    )
    if (rows.length === 0) return false
    this.changed({ kind: 'token', token })
    return true
  }

  async listAccessTokens(filter: { userId?: string; consumerKey?: string }): Promise<AccessToken[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.userId !== undefined) {
      if (!isUserId(filter.userId)) return []
      params.push(filter.userId)
      where.push(`user_id = $${params.length}`)
    }
    if (filter.consumerKey !== undefined) {
      if (!isPlausibleKey(filter.consumerKey)) return []
      params.push(filter.consumerKey)
      where.push(`consumer_key = $${params.length}`)
    }
    const rows = await this.db.query<TokenRow>(
      `SELECT ${tokenColumns} FROM kigo_gateway.access_tokens ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, token`,
      params,
    )
    return rows.map(toToken)
  }

  // ---- request tokens (RFC 5849 §2, docs/gateway.md#the-oauth-provider-and-the-account-pages) -----------------------------------------

  async createRequestToken(input: {
    consumerKey: string
    callback: string
    scopes: Scope[]
    expiresAt: Date
    now: Date
  }): Promise<{ requestToken: RequestToken; secret: string }> {
    const scopes = checkScopes(input.scopes)
    if (typeof input.callback !== 'string' || input.callback === '' || input.callback.length > limits.callbackUrlLength) {
      throw new InvalidInput('callback', 'callback must be a URL or "oob"')
    }
    const token = randomToken(tokenBytes)
    const secret = randomToken(secretBytes)
    const row = await this.db.transaction(async (tx: Queryable) => {
      // Rows a day past expiry can no longer be answered usefully; dropping them here
      // keeps the table small without a separate sweeper.
      await tx.query(`DELETE FROM kigo_gateway.request_tokens WHERE expires_at < $1`, [new Date(input.now.getTime() - dayMs)])
      const consumer = isPlausibleKey(input.consumerKey)
        ? (await tx.query<{ scopes: Scope[] }>(`SELECT scopes FROM kigo_gateway.consumers WHERE key = $1`, [input.consumerKey]))[0]
        : undefined
      if (!consumer) throw new NotFound(`no application with consumer key ${JSON.stringify(input.consumerKey)}`)
      const beyond = scopesBeyondRegistration(scopes, consumer.scopes)
      if (beyond !== null) throw new InvalidInput('scopes', `the application is ${beyond}`)
      const rows = await tx.query<RequestTokenRow>(
        `INSERT INTO kigo_gateway.request_tokens (token, secret, consumer_key, callback, scopes, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5::text[], $6, $7) RETURNING ${requestTokenColumns}`,
        [token, this.box.seal(secret, aad.requestTokenSecret(token)), input.consumerKey, input.callback, scopes, input.now, input.expiresAt],
      )
      return rows[0]!
    })
    return { requestToken: toRequestToken(row), secret }
  }

  async getRequestToken(token: string): Promise<{ requestToken: RequestToken; secret: string } | null> {
    if (!isPlausibleKey(token)) return null
    const rows = await this.db.query<RequestTokenRow>(`SELECT ${requestTokenColumns} FROM kigo_gateway.request_tokens WHERE token = $1`, [token])
    const row = rows[0]
    if (!row) return null
    return { requestToken: toRequestToken(row), secret: this.box.open(row.secret, aad.requestTokenSecret(row.token)) }
  }

  async approveRequestToken(token: string, userId: string, now: Date): Promise<{ verifier: string } | null> {
    if (!isPlausibleKey(token) || !isUserId(userId)) return null
    const verifier = newVerifier()
    // One conditional UPDATE: of two concurrent decisions exactly one takes effect.
    const rows = await this.db.query(
      `UPDATE kigo_gateway.request_tokens SET state = 'approved', user_id = $2, verifier_hash = $3, decided_at = $4
       WHERE token = $1 AND state = 'pending' AND expires_at > $4 RETURNING token`,
      [token, userId, sha256(verifier), now],
    )
    return rows.length === 0 ? null : { verifier }
  }

  async denyRequestToken(token: string, userId: string, now: Date): Promise<boolean> {
    if (!isPlausibleKey(token) || !isUserId(userId)) return false
    const rows = await this.db.query(
      `UPDATE kigo_gateway.request_tokens SET state = 'denied', user_id = $2, decided_at = $3
       WHERE token = $1 AND state = 'pending' AND expires_at > $3 RETURNING token`,
      [token, userId, now],
    )
    return rows.length > 0
  }

  async exchangeRequestToken(token: string, verifier: string, now: Date): Promise<ExchangeResult> {
    if (!isPlausibleKey(token)) return { ok: false, reason: 'unknown' }
    const accessToken = randomToken(tokenBytes)
    const secret = randomToken(secretBytes)
    type Failed = Extract<ExchangeResult, { ok: false }>
    const refuse = (reason: Failed['reason']): Failed => ({ ok: false, reason })
    const result = await this.db.transaction(async (tx: Queryable): Promise<Failed | TokenRow> => {
      // FOR UPDATE serializes concurrent exchanges of one token: the second sees 'used'.
      const found = await tx.query<RequestTokenRow & { verifier_hash: string | null }>(
        `SELECT ${requestTokenColumns}, verifier_hash FROM kigo_gateway.request_tokens WHERE token = $1 FOR UPDATE`,
        [token],
      )
      const rt = found[0]
      if (!rt) return refuse('unknown')
      if (rt.state === 'used') return refuse('used')
      if (new Date(rt.expires_at).getTime() <= now.getTime()) return refuse('expired')
      if (rt.state === 'pending') return refuse('pending')
      if (rt.state === 'denied') return refuse('denied')
      if (rt.verifier_hash === null || typeof verifier !== 'string' || !safeEqual(sha256(normalizeVerifier(verifier)), rt.verifier_hash)) {
        return refuse('verifier_mismatch')
      }
      await tx.query(`UPDATE kigo_gateway.request_tokens SET state = 'used', used_at = $2 WHERE token = $1`, [token, now])
      const rows = await tx.query<TokenRow>(
        `INSERT INTO kigo_gateway.access_tokens (token, secret, consumer_key, user_id, scopes)
         VALUES ($1, $2, $3, $4, $5::text[]) RETURNING ${tokenColumns}`,
        [accessToken, this.box.seal(secret, aad.tokenSecret(accessToken)), rt.consumer_key, rt.user_id, rt.scopes],
      )
      return rows[0]!
    })
    if ('reason' in result) return result
    this.changed({ kind: 'token', token: accessToken })
    return { ok: true, token: toToken(result), secret }
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

  // ---- authorized applications ----------------------------------------------------------

  async listAuthorizedApplications(userId: string): Promise<AuthorizedApplication[]> {
    if (!isUserId(userId)) return []
    const rows = await this.db.query<ConsumerRow & { token_scopes: string[]; token_created_at: Date }>(
      `SELECT ${consumerColumns.split(', ').map((c) => `c.${c}`).join(', ')}, t.scopes AS token_scopes, t.created_at AS token_created_at
       FROM kigo_gateway.access_tokens t JOIN kigo_gateway.consumers c ON c.key = t.consumer_key
       WHERE t.user_id = $1 AND t.revoked_at IS NULL
       ORDER BY t.created_at, t.token`,
      [userId],
    )
    const byKey = new Map<string, AuthorizedApplication>()
    for (const row of rows) {
      let app = byKey.get(row.key)
      if (!app) {
        app = { consumer: toConsumer(row), scopes: [], authorizedAt: new Date(row.token_created_at), tokens: 0 }
        byKey.set(row.key, app)
      }
      app.tokens += 1
      app.scopes = allScopes.filter((s) => app.scopes.includes(s) || row.token_scopes.includes(s))
    }
    return [...byKey.values()]
  }

  async revokeUserTokensForConsumer(userId: string, consumerKey: string): Promise<number> {
    if (!isUserId(userId) || !isPlausibleKey(consumerKey)) return 0
    const rows = await this.db.query<{ token: string }>(
      `UPDATE kigo_gateway.access_tokens SET revoked_at = now()
       WHERE user_id = $1 AND consumer_key = $2 AND revoked_at IS NULL RETURNING token`,
      [userId, consumerKey],
    )
    for (const row of rows) this.changed({ kind: 'token', token: row.token })
    return rows.length
  }

  async countApplicationUsers(consumerKey: string): Promise<number> {
    if (!isPlausibleKey(consumerKey)) return 0
    // Read from the index of unrevoked tokens by application and user (migration 83).
    const rows = await this.db.query<{ n: number | string }>(
      `SELECT count(DISTINCT user_id) AS n FROM kigo_gateway.access_tokens WHERE consumer_key = $1 AND revoked_at IS NULL`,
      [consumerKey],
    )
    return Number(rows[0]?.n ?? 0)
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
