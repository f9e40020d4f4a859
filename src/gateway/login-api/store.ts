// Login sites and their certs (docs/login-api.md), in the gateway's store so that every
// gateway shares them: a sign-in started on one gateway is exchanged on any other.
// The secret is sealed like a consumer secret; a cert is kept only as its SHA-256.
import { createHash } from 'node:crypto'
import type { Db } from '../../common/sql.js'
import { randomToken } from '../../common/secrets.js'
import { SecretBox } from '../store/crypto.js'
import { NotFound } from '../store/types.js'
import { checkCallbackUrl, checkHomeUrl, checkName, InvalidInput, isPlausibleKey } from '../store/validation.js'
import { userIdPattern } from '../domain/identifiers.js'
import { storedPrevious, type PreviousSecret } from '../domain/secret-rotation.js'
import { editRow } from '../registrations/store.js'

export interface LoginSite {
  apiKey: string
  name: string
  ownerId: string
  callbackUrl: string
  /** The site's home page, linked on the consent page; null when none was given. */
  homeUrl: string | null
  createdAt: Date
}

/** What the owner of a site may change after registering it. */
export interface SiteDetails {
  name: string
  callbackUrl: string
  homeUrl: string | null
}

/** A site's name, callback (required) and home page as the store keeps them: the one check of a registration and of an edit. */
function checkSiteDetails(input: { name: string; callbackUrl: string; homeUrl?: string | null }): SiteDetails {
  const name = checkName(input.name)
  const callbackUrl = checkCallbackUrl(input.callbackUrl)
  if (callbackUrl === null) throw new InvalidInput('callbackUrl', 'callback URL is required')
  return { name, callbackUrl, homeUrl: checkHomeUrl(input.homeUrl) }
}

/** Why a cert was not redeemed. */
export type CertProblem = 'unknown' | 'used' | 'expired' | 'foreign'

const keyBytes = 18
const secretBytes = 24
/** 32 random bytes: far beyond the 128 bits asked of a cert. */
const certBytes = 32

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex')
const secretAad = (apiKey: string) => `login_sites.secret:${apiKey}`
const previousSecretAad = (apiKey: string) => `login_sites.previous_secret:${apiKey}`

interface SiteRow {
  api_key: string
  secret: string
  name: string
  owner_id: string
  callback_url: string
  home_url: string | null
  created_at: Date | string
}

const columns = 'api_key, secret, name, owner_id, callback_url, home_url, created_at'
const toSite = (r: SiteRow): LoginSite => ({ apiKey: r.api_key, name: r.name, ownerId: r.owner_id, callbackUrl: r.callback_url, homeUrl: r.home_url, createdAt: new Date(r.created_at) })

export class LoginSiteStore {
  private readonly box: SecretBox

  constructor(private readonly db: Db, secretKey: string) {
    this.box = new SecretBox(secretKey)
  }

  /** A new site; throws InvalidInput for a bad name, callback or home page, NotFound for an unknown owner. */
  async create(input: { name: string; ownerId: string; callbackUrl: string; homeUrl?: string | null }): Promise<{ site: LoginSite; secret: string }> {
    const { name, callbackUrl, homeUrl } = checkSiteDetails(input)
    if (!userIdPattern.test(input.ownerId)) throw new NotFound(`no user ${JSON.stringify(input.ownerId)}`)
    const apiKey = randomToken(keyBytes)
    const secret = randomToken(secretBytes)
    const rows = await this.db.query<SiteRow>(
      `INSERT INTO kigo_gateway.login_sites (api_key, secret, name, owner_id, callback_url, home_url)
       SELECT $1, $2, $3, u.id, $5, $6 FROM kigo_gateway.users u WHERE u.id = $4
       RETURNING ${columns}`,
      [apiKey, this.box.seal(secret, secretAad(apiKey)), name, input.ownerId, callbackUrl, homeUrl],
    )
    if (rows.length === 0) throw new NotFound(`no user ${input.ownerId}`)
    return { site: toSite(rows[0]!), secret }
  }

  /**
   * The site and its secret, with the secret a rotation replaced while it is kept
   * (`previous`, absent when none; it may have expired), or null (anything that cannot be
   * a key is not looked up).
   */
  async get(apiKey: string): Promise<{ site: LoginSite; secret: string; previous?: PreviousSecret } | null> {
    if (!isPlausibleKey(apiKey)) return null
    const rows = await this.db.query<SiteRow & { previous_secret: string | null; previous_secret_expires_at: Date | string | null }>(
      `SELECT ${columns}, previous_secret, previous_secret_expires_at FROM kigo_gateway.login_sites WHERE api_key = $1`,
      [apiKey],
    )
    const row = rows[0]
    if (!row) return null
    const found = { site: toSite(row), secret: this.box.open(row.secret, secretAad(row.api_key)) }
    const previous = storedPrevious(row.previous_secret, row.previous_secret_expires_at, (sealed) => this.box.open(sealed, previousSecretAad(row.api_key)))
    return previous ? { ...found, previous } : found
  }

  /** The site without its secret (owner checks, listings: nothing is decrypted), or null. */
  async find(apiKey: string): Promise<LoginSite | null> {
    if (!isPlausibleKey(apiKey)) return null
    const rows = await this.db.query<SiteRow>(`SELECT ${columns} FROM kigo_gateway.login_sites WHERE api_key = $1`, [apiKey])
    return rows[0] ? toSite(rows[0]) : null
  }

  async list(ownerId?: string): Promise<LoginSite[]> {
    const rows = ownerId === undefined
      ? await this.db.query<SiteRow>(`SELECT ${columns} FROM kigo_gateway.login_sites ORDER BY created_at, api_key`)
      : await this.db.query<SiteRow>(`SELECT ${columns} FROM kigo_gateway.login_sites WHERE owner_id = $1 ORDER BY created_at, api_key`, [ownerId])
    return rows.map(toSite)
  }

  /**
   * New name, callback and home page, checked as a registration checks them (InvalidInput);
   * the site before and after, or null for an unknown key. Every gateway reads sites from
   * here on each request, so the change applies everywhere at once.
   */
  async update(apiKey: string, details: SiteDetails): Promise<{ before: LoginSite; after: LoginSite } | null> {
    const { name, callbackUrl, homeUrl } = checkSiteDetails(details)
    if (!isPlausibleKey(apiKey)) return null
    const edited = await editRow<SiteRow>(this.db, { table: 'kigo_gateway.login_sites', idColumn: 'api_key', columns, id: apiKey, set: 'name = $2, callback_url = $3, home_url = $4', values: [name, callbackUrl, homeUrl] })
    return edited && { before: toSite(edited.before), after: toSite(edited.after) }
  }

  /**
   * A new secret; null for an unknown key. Without an overlap the old one stops working at
   * once and any previous secret is forgotten; with one, the old secret keeps working until
   * `now` + the overlap (`previousUntil`), replacing any earlier previous secret
   * (docs/login-api.md#rotating-the-secret).
   */
  async rotateSecret(apiKey: string, options: { overlapSeconds?: number; now?: number } = {}): Promise<{ site: LoginSite; secret: string; previousUntil: Date | null } | null> {
    if (!isPlausibleKey(apiKey)) return null
    const secret = randomToken(secretBytes)
    const overlapSeconds = options.overlapSeconds ?? 0
    let previousUntil = overlapSeconds > 0 ? new Date((options.now ?? Date.now()) + overlapSeconds * 1000) : null
    const row = await this.db.transaction(async (tx) => {
      // Locked while the old secret moves: of two rotations at once, the second keeps the first's.
      const current = await tx.query<{ secret: string }>('SELECT secret FROM kigo_gateway.login_sites WHERE api_key = $1 FOR UPDATE', [apiKey])
      if (!current[0]) return null
      const previous = previousUntil === null ? null : this.box.reseal(current[0].secret, secretAad(apiKey), previousSecretAad(apiKey))
      if (previous === null) previousUntil = null
      const rows = await tx.query<SiteRow>(
        `UPDATE kigo_gateway.login_sites SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4 WHERE api_key = $1 RETURNING ${columns}`,
        [apiKey, this.box.seal(secret, secretAad(apiKey)), previous, previousUntil],
      )
      return rows[0] ?? null
    })
    return row ? { site: toSite(row), secret, previousUntil } : null
  }

  /** Deletes the site and its outstanding certs; null for an unknown key. */
  async delete(apiKey: string): Promise<LoginSite | null> {
    if (!isPlausibleKey(apiKey)) return null
    const rows = await this.db.query<SiteRow>(`DELETE FROM kigo_gateway.login_sites WHERE api_key = $1 RETURNING ${columns}`, [apiKey])
    return rows[0] ? toSite(rows[0]) : null
  }

  /** Issues a cert for `userId` at `apiKey`'s site, valid `ttlSeconds` (one statement: sweeping is sweepCerts's, on a timer). */
  async issueCert(apiKey: string, userId: string, now: number, ttlSeconds: number): Promise<string> {
    const cert = randomToken(certBytes)
    await this.db.query(
      `INSERT INTO kigo_gateway.login_certs (cert_hash, api_key, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [sha256(cert), apiKey, userId, new Date(now), new Date(now + ttlSeconds * 1000)],
    )
    return cert
  }

  /**
   * Deletes certs that expired more than a day before `now` (kept that long so that a late
   * exchange is told "expired", not "unknown"), at most `limit` rows; how many.
   */
  async sweepCerts(now: number, limit = 1000): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM kigo_gateway.login_certs WHERE cert_hash IN (SELECT cert_hash FROM kigo_gateway.login_certs WHERE expires_at < $1 LIMIT ${Math.max(1, Math.floor(limit))}) RETURNING 1`,
      [new Date(now - 86_400_000)],
    )
    return rows.length
  }

  /**
   * Redeems `cert` for the site `apiKey`: the user it was issued for, once. A cert of
   * another site is left as it is (its own site can still redeem it).
   */
  async redeemCert(apiKey: string, cert: string, now: number): Promise<{ userId: string } | { problem: CertProblem }> {
    if (!isPlausibleKey(cert)) return { problem: 'unknown' }
    const hash = sha256(cert)
    const at = new Date(now)
    const rows = await this.db.query<{ user_id: string }>(
      `UPDATE kigo_gateway.login_certs SET used_at = $3
       WHERE cert_hash = $1 AND api_key = $2 AND used_at IS NULL AND expires_at > $3
       RETURNING user_id`,
      [hash, apiKey, at],
    )
    if (rows[0]) return { userId: rows[0].user_id }
    const found = await this.db.query<{ api_key: string; used_at: Date | null; expires_at: Date | string }>(
      `SELECT api_key, used_at, expires_at FROM kigo_gateway.login_certs WHERE cert_hash = $1`,
      [hash],
    )
    const row = found[0]
    if (!row) return { problem: 'unknown' }
    if (row.api_key !== apiKey) return { problem: 'foreign' }
    if (row.used_at !== null) return { problem: 'used' }
    return { problem: 'expired' }
  }
}
