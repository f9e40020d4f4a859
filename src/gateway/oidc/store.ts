// The OpenID Connect provider's data in the gateway's SQL store (docs/oidc.md#storage):
// relying parties, signing keys, and the provider library's state (grants, codes, tokens,
// sessions, interactions), shared by every gateway of a deployment.
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto'
import type { Db } from '../../common/sql.js'
import { randomToken } from '../../common/secrets.js'
import { SecretBox } from '../store/crypto.js'
import { checkName, checkWebUrl, InvalidInput } from '../store/validation.js'
import { NotFound } from '../store/types.js'
import { storedPrevious, type PreviousSecret } from '../domain/secret-rotation.js'
import { scopes as allScopes, type Scope } from '../domain/identifiers.js'

/** The associated data binding a client's previous secret to its row (store/crypto.ts). */
const previousAad = (clientId: string) => `oidc_clients.previous_secret:${clientId}`

export interface OidcClient {
  clientId: string
  name: string
  ownerId: string
  /** Public clients have no secret and prove themselves with PKCE alone. */
  public: boolean
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  /** The API scopes the client may be granted (OAuth 2.0 for the API, docs/oauth2.md); none for a sign-in-only site. */
  apiScopes: Scope[]
  createdAt: Date
}

export interface SigningKey {
  kid: string
  /** The private JWK (RS256). */
  jwk: Record<string, unknown>
  createdAt: Date
  retiredAt: Date | null
}

export interface SignedInSite {
  client: OidcClient
  grantedAt: Date
  scopes: string[]
}

const limits = { uris: 10, uriLength: 2000 }

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url')

/**
 * A redirect URI as registered, compared exactly: the rule of every registered URL
 * (checkWebUrl), so that what OAuth refuses as a callback OpenID Connect refuses too.
 */
export function checkRedirectUri(value: unknown, field = 'redirect_uri'): string {
  return checkWebUrl(value, field, field, limits.uriLength)
}

/** What the owner of a client may change after registering it (its type and secret stay). */
export interface ClientDetails {
  name: string
  redirectUris: string[]
  postLogoutRedirectUris: string[]
}

/** A client's name and URIs as the store keeps them: the one check of a registration and of an edit (InvalidInput). */
function checkClientDetails(input: { name: string; redirectUris: string[]; postLogoutRedirectUris?: string[] }): ClientDetails {
  const name = checkName(input.name)
  if (input.redirectUris.length === 0 || input.redirectUris.length > limits.uris) throw new InvalidInput('redirect_uris', `give 1 to ${limits.uris} redirect URIs`)
  const redirectUris = [...new Set(input.redirectUris.map((u) => checkRedirectUri(u)))]
  const postLogoutRedirectUris = [...new Set((input.postLogoutRedirectUris ?? []).map((u) => checkRedirectUri(u, 'post_logout_redirect_uri')))]
  return { name, redirectUris, postLogoutRedirectUris }
}

interface ClientRow {
  client_id: string
  secret: string | null
  previous_secret?: string | null
  previous_secret_expires_at?: Date | string | null
  name: string
  owner_id: string
  redirect_uris: string[]
  post_logout_redirect_uris: string[]
  api_scopes?: string[] | null
  created_at: Date | string
}

const toClient = (r: ClientRow): OidcClient => ({
  clientId: r.client_id,
  name: r.name,
  ownerId: r.owner_id,
  public: r.secret === null,
  redirectUris: r.redirect_uris,
  postLogoutRedirectUris: r.post_logout_redirect_uris,
  apiScopes: allScopes.filter((s) => (r.api_scopes ?? []).includes(s)),
  createdAt: new Date(r.created_at),
})

/** API scopes as registered: known ones only (InvalidInput), in canonical order. */
function checkApiScopes(values: readonly string[] | undefined): Scope[] {
  const unknown = (values ?? []).filter((v) => !(allScopes as readonly string[]).includes(v))
  if (unknown.length > 0) throw new InvalidInput('api_scopes', `unknown scope ${JSON.stringify(unknown[0]!.slice(0, 40))}; use some of ${allScopes.join(', ')}`)
  return allScopes.filter((s) => (values ?? []).includes(s))
}

export class OidcStore {
  private readonly box: SecretBox
  /**
   * Told of the grants revoked here, after their rows are gone: the API's access tokens are
   * verified without the store, so the gateways keep a list of revoked grants
   * (src/gateway/oauth2/revocations.ts). A failure is the revocation's failure.
   */
  onGrantsRevoked: ((grantIds: string[]) => Promise<void>) | null = null

  constructor(
    readonly db: Db,
    secretKey: string,
    private readonly now: () => number = Date.now,
  ) {
    this.box = new SecretBox(secretKey)
  }

  private sealSecret(clientId: string, secret: string): string {
    return this.box.seal(secret, `oidc_clients.secret:${clientId}`)
  }

  /** A replaced client secret, bound to its own column (docs/oidc.md#rotating-the-client-secret). */
  // ---- relying parties -------------------------------------------------------------------

  async createClient(input: { name: string; ownerId: string; redirectUris: string[]; postLogoutRedirectUris?: string[]; public: boolean; apiScopes?: readonly string[] }): Promise<{ client: OidcClient; secret: string | null }> {
    const { name, redirectUris, postLogoutRedirectUris: postLogout } = checkClientDetails(input)
    const apiScopes = checkApiScopes(input.apiScopes)
    const clientId = randomToken(18)
    const secret = input.public ? null : randomToken(32)
    try {
      const rows = await this.db.query<ClientRow>(
        `INSERT INTO kigo_gateway.oidc_clients (client_id, secret, name, owner_id, redirect_uris, post_logout_redirect_uris, api_scopes)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [clientId, secret === null ? null : this.sealSecret(clientId, secret), name, input.ownerId, redirectUris, postLogout, apiScopes],
      )
      return { client: toClient(rows[0]!), secret }
    } catch (err) {
      if ((err as { code?: string }).code === '23503') throw new NotFound(`no user ${input.ownerId}`)
      throw err
    }
  }

  /** The client and its secret, with the secret a rotation replaced while it is kept (`previous`, absent when none; it may have expired). */
  async getClient(clientId: string): Promise<{ client: OidcClient; secret: string | null; previous?: PreviousSecret } | null> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) return null
    const rows = await this.db.query<ClientRow>('SELECT * FROM kigo_gateway.oidc_clients WHERE client_id = $1', [clientId])
    const r = rows[0]
    if (!r) return null
    const found = { client: toClient(r), secret: r.secret === null ? null : this.box.open(r.secret, `oidc_clients.secret:${clientId}`) }
    const previous = storedPrevious(r.previous_secret, r.previous_secret_expires_at, (sealed) => this.box.open(sealed, previousAad(clientId)))
    return previous ? { ...found, previous } : found
  }

  /** The client without its secret (owner checks, listings: nothing is decrypted), or null. */
  async findClient(clientId: string): Promise<OidcClient | null> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) return null
    const rows = await this.db.query<ClientRow>('SELECT * FROM kigo_gateway.oidc_clients WHERE client_id = $1', [clientId])
    return rows[0] ? toClient(rows[0]) : null
  }

  async listClients(ownerId?: string): Promise<OidcClient[]> {
    const rows = ownerId === undefined
      ? await this.db.query<ClientRow>('SELECT * FROM kigo_gateway.oidc_clients ORDER BY created_at, client_id')
      : await this.db.query<ClientRow>('SELECT * FROM kigo_gateway.oidc_clients WHERE owner_id = $1 ORDER BY created_at, client_id', [ownerId])
    return rows.map(toClient)
  }

  /**
   * New name and redirect URIs, checked as a registration checks them (InvalidInput); the
   * client before and after, or null when there is no such client. The provider reads a
   * client from here on every request (provider.ts, its adapter), so every gateway uses the
   * new URIs at once.
   */
  async updateClient(clientId: string, details: ClientDetails): Promise<{ before: OidcClient; after: OidcClient } | null> {
    const checked = checkClientDetails(details)
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) return null
    return this.db.transaction(async (tx) => {
      const old = await tx.query<ClientRow>('SELECT * FROM kigo_gateway.oidc_clients WHERE client_id = $1 FOR UPDATE', [clientId])
      if (!old[0]) return null
      const rows = await tx.query<ClientRow>(
        'UPDATE kigo_gateway.oidc_clients SET name = $2, redirect_uris = $3, post_logout_redirect_uris = $4 WHERE client_id = $1 RETURNING *',
        [clientId, checked.name, checked.redirectUris, checked.postLogoutRedirectUris],
      )
      return { before: toClient(old[0]), after: toClient(rows[0]!) }
    })
  }

  /**
   * A new secret for a confidential client (null: no such client; a public one has none to
   * rotate). Without an overlap the old secret stops working at once and any previous one
   * is forgotten; with one, the old secret keeps working until now + the overlap
   * (`previousUntil`), replacing any earlier previous secret (docs/oidc.md#rotating-the-client-secret).
   */
  async rotateClientSecret(clientId: string, options: { overlapSeconds?: number } = {}): Promise<{ client: OidcClient; secret: string; previousUntil: Date | null } | 'public' | null> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) return null
    const secret = randomToken(32)
    const overlapSeconds = options.overlapSeconds ?? 0
    let previousUntil = overlapSeconds > 0 ? new Date(this.now() + overlapSeconds * 1000) : null
    return this.db.transaction(async (tx) => {
      // Locked while the old secret moves: of two rotations at once, the second keeps the first's.
      const rows = await tx.query<ClientRow>('SELECT * FROM kigo_gateway.oidc_clients WHERE client_id = $1 FOR UPDATE', [clientId])
      const row = rows[0]
      if (!row) return null
      if (row.secret === null) return 'public' as const
      const previous = previousUntil === null ? null : this.box.reseal(row.secret, `oidc_clients.secret:${clientId}`, previousAad(clientId))
      if (previous === null) previousUntil = null
      await tx.query('UPDATE kigo_gateway.oidc_clients SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4 WHERE client_id = $1', [
        clientId,
        this.sealSecret(clientId, secret),
        previous,
        previousUntil,
      ])
      return { client: toClient(row), secret, previousUntil }
    })
  }

  /** Deletes the client and everything the provider holds for it (grants, codes, tokens). */
  async deleteClient(clientId: string): Promise<{ client: OidcClient; grants: number } | null> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<ClientRow>('DELETE FROM kigo_gateway.oidc_clients WHERE client_id = $1 RETURNING *', [clientId])
      if (rows.length === 0) return null
      const grants = await tx.query<{ grant_id: string }>("SELECT grant_id FROM kigo_gateway.oidc_state WHERE model = 'Grant' AND client_id = $1", [clientId])
      await tx.query('DELETE FROM kigo_gateway.oidc_state WHERE client_id = $1 OR grant_id = ANY ($2::text[])', [clientId, grants.map((g) => g.grant_id)])
      return { client: toClient(rows[0]!), grants: grants.map((g) => g.grant_id) }
    }).then(async (done) => {
      if (done === null) return null
      await this.onGrantsRevoked?.(done.grants)
      return { client: done.client, grants: done.grants.length }
    })
  }

  // ---- sites a user signed in to -----------------------------------------------------------

  /** The relying parties `userId` has granted access to, newest first. */
  async signedInSites(userId: string): Promise<SignedInSite[]> {
    const rows = await this.db.query<ClientRow & { payload: { iat?: number; openid?: { scope?: string }; resources?: Record<string, string> } }>(
      `SELECT c.*, s.payload FROM kigo_gateway.oidc_state s JOIN kigo_gateway.oidc_clients c ON c.client_id = s.client_id
       WHERE s.model = 'Grant' AND s.account_id = $1 AND (s.expires_at IS NULL OR s.expires_at > $2)
       ORDER BY (s.payload->>'iat')::bigint DESC`,
      [userId, new Date(this.now())],
    )
    const seen = new Map<string, SignedInSite>()
    for (const r of rows) {
      const site = seen.get(r.client_id)
      // OpenID Connect's scopes, and the API's (OAuth 2.0) granted for its resource.
      const scopes = [r.payload.openid?.scope ?? '', ...Object.values(r.payload.resources ?? {})].join(' ').split(' ').filter((s) => s !== '')
      if (site) {
        site.scopes = [...new Set([...site.scopes, ...scopes])]
        continue
      }
      seen.set(r.client_id, { client: toClient(r), grantedAt: new Date((r.payload.iat ?? 0) * 1000), scopes })
    }
    return [...seen.values()]
  }

  /** How many people hold an unexpired grant of the client (one count, never the rows). */
  async countSignedInUsers(clientId: string): Promise<number> {
    if (!/^[A-Za-z0-9_-]{1,128}$/.test(clientId)) return 0
    const rows = await this.db.query<{ n: number | string }>(
      `SELECT count(DISTINCT account_id) AS n FROM kigo_gateway.oidc_state
       WHERE model = 'Grant' AND client_id = $1 AND account_id IS NOT NULL AND (expires_at IS NULL OR expires_at > $2)`,
      [clientId, new Date(this.now())],
    )
    return Number(rows[0]?.n ?? 0)
  }

  /** Revokes every grant of `userId` to `clientId` with its codes and tokens; how many grants. */
  async revokeSite(userId: string, clientId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const grants = await tx.query<{ grant_id: string }>("SELECT grant_id FROM kigo_gateway.oidc_state WHERE model = 'Grant' AND account_id = $1 AND client_id = $2", [userId, clientId])
      if (grants.length === 0) return 0
      await tx.query('DELETE FROM kigo_gateway.oidc_state WHERE grant_id = ANY ($1::text[])', [grants.map((g) => g.grant_id)])
      return grants.map((g) => g.grant_id)
    }).then(async (revoked) => {
      if (revoked === 0) return 0
      await this.onGrantsRevoked?.(revoked)
      return revoked.length
    })
  }

  // ---- signing keys ----------------------------------------------------------------------------

  private sealKey(kid: string, jwk: Record<string, unknown>): string {
    return this.box.seal(JSON.stringify(jwk), `oidc_keys.jwk:${kid}`)
  }

  private static newKey(): { kid: string; jwk: Record<string, unknown> } {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const kid = randomUUID()
    return { kid, jwk: { ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } }
  }

  /**
   * The keys to publish, the signing key first. The first gateway to start generates the
   * first key; the others find it (one key even when several start at once).
   */
  async keys(keepRetiredSeconds: number): Promise<SigningKey[]> {
    const read = async () => {
      const rows = await this.db.query<{ kid: string; jwk: string; created_at: Date | string; retired_at: Date | string | null }>(
        `SELECT kid, jwk, created_at, retired_at FROM kigo_gateway.oidc_keys
         WHERE retired_at IS NULL OR retired_at > $1 ORDER BY retired_at IS NULL DESC, created_at DESC, kid`,
        [new Date(this.now() - keepRetiredSeconds * 1000)],
      )
      return rows.map((r) => ({
        kid: r.kid,
        jwk: JSON.parse(this.box.open(r.jwk, `oidc_keys.jwk:${r.kid}`)) as Record<string, unknown>,
        createdAt: new Date(r.created_at),
        retiredAt: r.retired_at === null ? null : new Date(r.retired_at),
      }))
    }
    const found = await read()
    if (found.some((k) => k.retiredAt === null)) return found
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['kigo-oidc-keys'])
      const current = await tx.query("SELECT 1 FROM kigo_gateway.oidc_keys WHERE retired_at IS NULL")
      if (current.length > 0) return
      const { kid, jwk } = OidcStore.newKey()
      await tx.query('INSERT INTO kigo_gateway.oidc_keys (kid, jwk, created_at) VALUES ($1, $2, $3)', [kid, this.sealKey(kid, jwk), new Date(this.now())])
    })
    return read()
  }

  /** A new signing key; the current one is retired (still published for `keepRetiredSeconds`). */
  async rotateKey(keepRetiredSeconds: number): Promise<{ kid: string; retired: string[]; dropped: number }> {
    const { kid, jwk } = OidcStore.newKey()
    const at = new Date(this.now())
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['kigo-oidc-keys'])
      const retired = await tx.query<{ kid: string }>('UPDATE kigo_gateway.oidc_keys SET retired_at = $1 WHERE retired_at IS NULL RETURNING kid', [at])
      await tx.query('INSERT INTO kigo_gateway.oidc_keys (kid, jwk, created_at) VALUES ($1, $2, $3)', [kid, this.sealKey(kid, jwk), at])
      // Keys retired long enough ago that nothing they signed is still valid.
      const dropped = await tx.query('DELETE FROM kigo_gateway.oidc_keys WHERE retired_at IS NOT NULL AND retired_at <= $1 RETURNING kid', [new Date(at.getTime() - keepRetiredSeconds * 1000)])
      return { kid, retired: retired.map((r) => r.kid), dropped: dropped.length }
    })
  }

  /** A value that changes whenever the set of keys does (polled by every gateway). */
  async keysVersion(): Promise<string> {
    const rows = await this.db.query<{ v: string | null }>("SELECT string_agg(kid || ':' || coalesce(retired_at::text, ''), ',' ORDER BY kid) AS v FROM kigo_gateway.oidc_keys")
    return rows[0]?.v ?? ''
  }

  // ---- the provider library's state (its adapter interface) ------------------------------------

  async upsertState(model: string, id: string, payload: Record<string, unknown>, expiresInSeconds: number | undefined): Promise<void> {
    const expiresAt = expiresInSeconds ? new Date(this.now() + expiresInSeconds * 1000) : null
    const uid = typeof payload.uid === 'string' ? sha256(payload.uid) : null
    const userCode = typeof payload.userCode === 'string' ? sha256(payload.userCode) : null
    const str = (v: unknown) => (typeof v === 'string' ? v : null)
    await this.db.query(
      `INSERT INTO kigo_gateway.oidc_state (model, id_hash, payload, grant_id, uid_hash, account_id, client_id, expires_at, user_code_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (model, id_hash) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid_hash = EXCLUDED.uid_hash,
         account_id = EXCLUDED.account_id, client_id = EXCLUDED.client_id, expires_at = EXCLUDED.expires_at, user_code_hash = EXCLUDED.user_code_hash`,
      // A grant's own id is its grant_id: revoking it removes it with its codes and tokens.
      [model, sha256(id), JSON.stringify(payload), model === 'Grant' ? id : str(payload.grantId), uid, str(payload.accountId), str(payload.clientId), expiresAt, userCode],
    )
  }

  private async findBy(column: 'id_hash' | 'uid_hash' | 'user_code_hash', model: string, value: string): Promise<Record<string, unknown> | undefined> {
    const rows = await this.db.query<{ payload: Record<string, unknown> | string; consumed_at: Date | string | null }>(
      `SELECT payload, consumed_at FROM kigo_gateway.oidc_state WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > $3)`,
      [model, sha256(value), new Date(this.now())],
    )
    const r = rows[0]
    if (!r) return undefined
    const payload = typeof r.payload === 'string' ? (JSON.parse(r.payload) as Record<string, unknown>) : r.payload
    return r.consumed_at === null ? payload : { ...payload, consumed: Math.floor(new Date(r.consumed_at).getTime() / 1000) }
  }

  findState(model: string, id: string) {
    return this.findBy('id_hash', model, id)
  }

  findStateByUid(model: string, uid: string) {
    return this.findBy('uid_hash', model, uid)
  }

  /** A device code by the code its user typed (RFC 8628 §3.3). */
  findStateByUserCode(model: string, userCode: string) {
    return this.findBy('user_code_hash', model, userCode)
  }

  async consumeState(model: string, id: string): Promise<void> {
    await this.db.query('UPDATE kigo_gateway.oidc_state SET consumed_at = $3 WHERE model = $1 AND id_hash = $2', [model, sha256(id), new Date(this.now())])
  }

  async destroyState(model: string, id: string): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.oidc_state WHERE model = $1 AND id_hash = $2', [model, sha256(id)])
  }

  async revokeGrant(grantId: string): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.oidc_state WHERE grant_id = $1', [grantId])
    await this.onGrantsRevoked?.([grantId])
  }

  /** Deletes expired state, at most `limit` rows (run now and then by each gateway). */
  async sweep(limit = 1000): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM kigo_gateway.oidc_state WHERE ctid IN (SELECT ctid FROM kigo_gateway.oidc_state WHERE expires_at <= $1 LIMIT ${Math.max(1, Math.floor(limit))}) RETURNING 1`,
      [new Date(this.now())],
    )
    return rows.length
  }
}
