// The OAuth 1.0a store (docs/gateway.md#the-oauth-provider-and-the-account-pages): applications
// (consumers), their access tokens and request tokens, and a user's authorized applications,
// over the SQL layer shared with the identity store (src/gateway/store/), whose users the
// rows refer to. Secrets are sealed before they reach SQL (store/crypto.ts) and generated
// here with randomToken; every committed change to an application or a token is announced
// (IdentityChange) so that the verifiers' cached credential lookup drops it at once.
import type { Db, Queryable } from '../../common/sql.js'
import { createHash } from 'node:crypto'
import { randomToken, safeEqual } from '../../common/secrets.js'
import { newVerifier, normalizeVerifier } from '../store/verifier-code.js'
import { InvalidInput, checkCallbackUrl, checkHomeUrl, checkName, checkScopes, isPlausibleKey, limits, scopesBeyondRegistration } from '../store/validation.js'
import { NotFound, type AccessToken, type AuthorizedApplication, type Consumer, type ConsumerDetails, type ExchangeResult, type RequestToken, type RequestTokenState } from '../store/types.js'
import type { IdentityStoreBase } from '../store/sql-identity-store.js'
import type { OAuth1Store } from './types.js'
import { editRow } from '../registrations/store.js'
import { scopes as allScopes, userIdPattern, type Scope } from '../domain/identifiers.js'
import { storedPrevious, type PreviousSecret } from '../domain/secret-rotation.js'

// Sizes of generated values (base64url of random bytes): keys and tokens are public
// identifiers, secrets are HMAC keys (RFC 5849 §3.4.2), each well above guessing range.
const consumerKeyBytes = 18
const tokenBytes = 24
const secretBytes = 32
// A verifier is typed by hand in the oob flow: see store/verifier-code.ts.
const dayMs = 24 * 60 * 60 * 1000

/** Verifiers are only ever compared: stored as their SHA-256. */
const sha256 = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex')

// Associated data binding each sealed value to its row (store/crypto.ts).
const aad = {
  consumerSecret: (key: string) => `consumers.secret:${key}`,
  previousConsumerSecret: (key: string) => `consumers.previous_secret:${key}`,
  tokenSecret: (token: string) => `access_tokens.secret:${token}`,
  requestTokenSecret: (token: string) => `request_tokens.secret:${token}`,
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

const consumerColumns = 'key, secret, name, owner_id, scopes, callback_url, home_url, created_at'
const tokenColumns = 'token, secret, consumer_key, user_id, scopes, created_at, revoked_at'
const requestTokenColumns = 'token, secret, consumer_key, callback, scopes, state, user_id, created_at, expires_at'

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

export class SqlOAuth1Store implements OAuth1Store {
  private readonly db: Db
  private readonly box: IdentityStoreBase['box']
  /** Called after each committed change (the identity store's listeners). */
  private readonly changed: IdentityStoreBase['changed']

  constructor(base: IdentityStoreBase) {
    this.db = base.db
    this.box = base.box
    this.changed = base.changed
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
    const edited = await editRow<ConsumerRow>(this.db, { table: 'kigo_gateway.consumers', idColumn: 'key', columns: consumerColumns, id: key, set: 'name = $2, callback_url = $3, home_url = $4', values: [name, callbackUrl, homeUrl] })
    const result = edited && { before: toConsumer(edited.before), after: toConsumer(edited.after) }
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
}
