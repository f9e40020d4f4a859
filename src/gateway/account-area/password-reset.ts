// "Forgot your password?" by mail: a link holding a random token is mailed to the
// account's contact e-mail; the store keeps only the token's SHA-256 digest, with an
// expiry, and a link works once (the consuming UPDATE marks it used atomically, so two
// gateways cannot both accept it). The mail goes through the outbox (src/gateway/mail/),
// never on the request's path: the page answers first, the same for every user ID, and
// the lookup and the mail follow (docs/security.md#the-password-reset-reveals-nothing).
import { createHash, randomUUID } from 'node:crypto'
import type { Db } from '../../common/sql.js'
import { randomToken } from '../../common/secrets.js'
import type { Outbox } from '../mail/index.js'
import type { MailAllowance } from '../mail/budget.js'

/** Reset links: one mail per user per 15 minutes. */
export const resetAllowance: MailAllowance = { limit: 1, windowSeconds: 900 }

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')

export class PasswordResetStore {
  constructor(private readonly db: Db) {}

  /** A new link's token for `userId`, valid `ttlSeconds`; the user's older links stop working. */
  async create(userId: string, ttlSeconds: number, now: number): Promise<string> {
    const token = randomToken(24)
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM kigo_gateway.password_resets WHERE user_id = $1 OR expires_at < $2', [userId, new Date(now).toISOString()])
      await tx.query('INSERT INTO kigo_gateway.password_resets (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [digest(token), userId, new Date(now + ttlSeconds * 1000).toISOString()])
    })
    return token
  }

  /** The user a live, unused token belongs to (without using it), or null. */
  async peek(token: string, now: number): Promise<string | null> {
    const rows = await this.db.query<{ user_id: string }>('SELECT user_id FROM kigo_gateway.password_resets WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [digest(token), new Date(now).toISOString()])
    return rows[0]?.user_id ?? null
  }

  /** Uses the token once: its user, or null when unknown, used or expired. */
  async consume(token: string, now: number): Promise<string | null> {
    const at = new Date(now).toISOString()
    const rows = await this.db.query<{ user_id: string }>('UPDATE kigo_gateway.password_resets SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id', [digest(token), at])
    return rows[0]?.user_id ?? null
  }
}

/** The reset mail for `userId` at `email`: a new link on `base`, through the outbox, expiring with the link. */
export async function mailResetLink(o: { store: PasswordResetStore; outbox: Pick<Outbox, 'enqueue' | 'nudge'>; ttlSeconds: number; now: number }, userId: string, email: string, base: string): Promise<void> {
  const token = await o.store.create(userId, o.ttlSeconds, o.now)
  const link = `${base}/account/reset?token=${encodeURIComponent(token)}`
  await o.outbox.enqueue({
    key: `password_reset:${randomUUID()}`,
    kind: 'password_reset',
    to: email,
    subject: 'Set a new kigo password',
    text: `Someone (you, we hope) asked to set a new password for the kigo account ${userId}.\n\nOpen this link within ${Math.round(o.ttlSeconds / 60)} minutes to choose one; it works once:\n\n${link}\n\nIf you did not ask, ignore this mail: your password stays as it is.\n`,
    expiresAt: o.now + o.ttlSeconds * 1000,
  })
  o.outbox.nudge()
}
