// The identity store over the SQL layer (SPEC §1, §5): one class for the embedded and
// the PostgreSQL engine, every name schema-qualified. Secrets are sealed or hashed before
// they reach SQL (crypto.ts) and generated here with randomToken.
import type { Db, Queryable } from '../../common/sql.js'
import { randomToken } from '../../common/secrets.js'
import { SecretBox, dummyPasswordHash, hashPassword, verifyPassword } from './crypto.js'
import {
  InvalidInput,
  checkCallbackUrl,
  checkName,
  checkPassword,
  checkScopes,
  checkUserId,
  isPlausibleKey,
  limits,
} from './validation.js'
import {
  Conflict,
  NotFound,
  userIdPattern,
  type AccessToken,
  type Consumer,
  type IdentityStore,
  type Scope,
  type User,
} from './types.js'

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

// Associated data binding each sealed value to its row (crypto.ts).
const aad = {
  apiPassword: (userId: string) => `users.api_password:${userId}`,
  consumerSecret: (key: string) => `consumers.secret:${key}`,
  tokenSecret: (token: string) => `access_tokens.secret:${token}`,
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
  created_at: Date
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

const userColumns = 'id, name, created_at'
const consumerColumns = 'key, secret, name, owner_id, scopes, callback_url, created_at'
const tokenColumns = 'token, secret, consumer_key, user_id, scopes, created_at, revoked_at'

const toUser = (r: UserRow): User => ({ id: r.id, name: r.name, createdAt: new Date(r.created_at) })
const toConsumer = (r: ConsumerRow): Consumer => ({
  key: r.key,
  name: r.name,
  ownerId: r.owner_id,
  scopes: r.scopes as Scope[],
  callbackUrl: r.callback_url,
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
    const id = checkUserId(input.id)
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
    return toUser(rows[0]!)
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

  // ---- consumers -----------------------------------------------------------------------

  async createConsumer(input: {
    name: string
    ownerId: string
    scopes: Scope[]
    callbackUrl: string | null
  }): Promise<{ consumer: Consumer; secret: string }> {
    const name = checkName(input.name)
    const scopes = checkScopes(input.scopes)
    const callbackUrl = checkCallbackUrl(input.callbackUrl)
    if (!isUserId(input.ownerId)) throw new NotFound(`no user ${JSON.stringify(input.ownerId)}`)
    const key = randomToken(consumerKeyBytes)
    const secret = randomToken(secretBytes)
    // Inserting from the owner's row makes "owner exists" and the insert one statement.
    const rows = await this.db.query<ConsumerRow>(
      `INSERT INTO kigo_gateway.consumers (key, secret, name, owner_id, scopes, callback_url)
       SELECT $1, $2, $3, u.id, $5::text[], $6 FROM kigo_gateway.users u WHERE u.id = $4
       RETURNING ${consumerColumns}`,
      [key, this.box.seal(secret, aad.consumerSecret(key)), name, input.ownerId, scopes, callbackUrl],
    )
    if (rows.length === 0) throw new NotFound(`no user ${input.ownerId}`)
    this.changed({ kind: 'consumer', key })
    return { consumer: toConsumer(rows[0]!), secret }
  }

  async getConsumer(key: string): Promise<{ consumer: Consumer; secret: string } | null> {
    if (!isPlausibleKey(key)) return null
    const rows = await this.db.query<ConsumerRow>(`SELECT ${consumerColumns} FROM kigo_gateway.consumers WHERE key = $1`, [key])
    const row = rows[0]
    if (!row) return null
    return { consumer: toConsumer(row), secret: this.box.open(row.secret, aad.consumerSecret(row.key)) }
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

  // ---- access tokens -------------------------------------------------------------------

  async createAccessToken(input: { consumerKey: string; userId: string; scopes: Scope[] }): Promise<{ token: AccessToken; secret: string }> {
    const scopes = checkScopes(input.scopes)
    const token = randomToken(tokenBytes)
    const secret = randomToken(secretBytes)
    const sealed = this.box.seal(secret, aad.tokenSecret(token))
    const row = await this.db.transaction(async (tx: Queryable) => {
      const consumer = isPlausibleKey(input.consumerKey)
        ? (await tx.query<{ scopes: string[] }>(`SELECT scopes FROM kigo_gateway.consumers WHERE key = $1`, [input.consumerKey]))[0]
        : undefined
      if (!consumer) throw new NotFound(`no application with consumer key ${JSON.stringify(input.consumerKey)}`)
      const user = isUserId(input.userId)
        ? (await tx.query(`SELECT id FROM kigo_gateway.users WHERE id = $1`, [input.userId]))[0]
        : undefined
      if (!user) throw new NotFound(`no user ${JSON.stringify(input.userId)}`)
      // A token never carries more than its application registered (SPEC §5, initiate).
      const beyond = scopes.filter((s) => !consumer.scopes.includes(s))
      if (beyond.length > 0) {
        throw new InvalidInput('scopes', `the application is not registered for ${beyond.join(', ')} (registered: ${consumer.scopes.join(', ')})`)
      }
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

  // ---- lifecycle -----------------------------------------------------------------------

  ping(): Promise<void> {
    return this.db.ping()
  }

  async close(): Promise<void> {
    this.listeners.clear()
    if (this.options.ownsDb) await this.db.close()
  }
}
