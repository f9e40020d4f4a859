// "Forgot your password?" by mail: a link holding a random token is mailed to the
// account's contact e-mail; the store keeps only the token's SHA-256 digest, with an
// expiry, and a link works once (the consuming UPDATE marks it used atomically, so two
// gateways cannot both accept it). Mail goes through nodemailer to KIGO_SMTP_URL.
import { createHash } from 'node:crypto'
import nodemailer from 'nodemailer'
import type { Db } from '../../common/sql.js'
import { randomToken } from '../../common/secrets.js'

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

export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>
}

/** The SMTP server could not be reached or did not take the mail: a dependency's failure (common/errors.ts). */
export class MailUnavailable extends Error {
  override name = 'MailUnavailable'
}

/** Mail through the SMTP server of `smtpUrl` (smtp:// or smtps://, credentials in the URL). */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl)
  return {
    async send(message) {
      try {
        await transport.sendMail({ from, ...message })
      } catch (err) {
        throw new MailUnavailable(`mail not sent: ${(err as Error).message}`, { cause: err })
      }
    },
  }
}
