// Contact e-mails that can be trusted (docs/gateway.md#the-contact-e-mail): the address
// kigo mails migration notices and password-reset links to. A user's new address is used
// only after its owner opens a link mailed to it (through the outbox): until then the old
// one stays, and the account page shows the new one as waiting. The link's token is
// random, stored as its SHA-256 digest only, works once (the consuming UPDATE marks it
// used, so two gateways cannot both accept it) and for `ttlSeconds`. Opening it shows a
// page whose button confirms (a mail scanner that fetches links confirms nothing).
//
// Whoever holds only a session cannot move the account's mail elsewhere: a change asks for
// the current login password (account-page.ts), and the old address is told when the
// address changes or is removed, with a link that puts it back and ends every session of
// the account (EmailUndoStore: one per user, single use, for `undoTtlSeconds`). A password
// reset within `recentChangeSeconds` of a change is told to the old address too
// (password-reset-pages.ts). Confirmation mails are budgeted per user and per recipient
// (`verifyAllowance`), so a session cannot make kigo mail strangers on demand.
//
// An address the operator sets (`kigo users email`, PUT /admin/users/:id/email) is taken
// as given, without a link: the operator vouches for it. Removing one's own address needs
// no link. Without a mail server no link can reach anyone, so a user cannot set a new
// address themselves: the page says to ask the operator of this service. The link's page
// is contact-email-pages.ts.
import { createHash, randomUUID } from 'node:crypto'
import type { Db } from '../../common/sql.js'
import { randomToken } from '../../common/secrets.js'
import { checkEmail, InvalidInput } from '../store/validation.js'
import type { Outbox } from '../mail/index.js'
import type { MailAllowance, MailBudget } from '../mail/budget.js'

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex')
const at = (ms: number) => new Date(ms).toISOString()

export interface PendingEmail {
  email: string
  expiresAt: Date
}

/** The links of migration 36: one live link per user at most. */
export class ContactEmailStore {
  constructor(private readonly db: Db) {}

  /** A new link's token for `userId` to start using `email`; the user's earlier links stop working. */
  async create(userId: string, email: string, ttlSeconds: number, now: number): Promise<string> {
    const token = randomToken(24)
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM kigo_gateway.email_verifications WHERE user_id = $1 OR expires_at < $2', [userId, at(now)])
      await tx.query('INSERT INTO kigo_gateway.email_verifications (token_hash, user_id, email, expires_at) VALUES ($1, $2, $3, $4)', [digest(token), userId, email, at(now + ttlSeconds * 1000)])
    })
    return token
  }

  /** The address waiting for its owner's confirmation, while its link works. */
  async pending(userId: string, now: number): Promise<PendingEmail | null> {
    const rows = await this.db.query<{ email: string; expires_at: Date | string }>('SELECT email, expires_at FROM kigo_gateway.email_verifications WHERE user_id = $1 AND used_at IS NULL AND expires_at > $2', [userId, at(now)])
    const row = rows[0]
    return row ? { email: row.email, expiresAt: new Date(row.expires_at) } : null
  }

  /** Forgets the user's waiting address (its link stops working). */
  async cancel(userId: string): Promise<void> {
    await this.db.query('DELETE FROM kigo_gateway.email_verifications WHERE user_id = $1', [userId])
  }

  /** The user and address a live, unused token stands for (without using it), or null. */
  async peek(token: string, now: number): Promise<{ userId: string; email: string } | null> {
    const rows = await this.db.query<{ user_id: string; email: string }>('SELECT user_id, email FROM kigo_gateway.email_verifications WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [digest(token), at(now)])
    return rows[0] ? { userId: rows[0].user_id, email: rows[0].email } : null
  }

  /** Uses the token once: its user and address, or null when unknown, used or expired. */
  async consume(token: string, now: number): Promise<{ userId: string; email: string } | null> {
    const rows = await this.db.query<{ user_id: string; email: string }>('UPDATE kigo_gateway.email_verifications SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id, email', [digest(token), at(now)])
    return rows[0] ? { userId: rows[0].user_id, email: rows[0].email } : null
  }
}

/** How long the link that undoes a change works: a week, for an owner who reads mail rarely. */
export const undoTtlSeconds = 7 * 86_400
/** A password reset this soon after a change of address is told to the old address too. */
export const recentChangeSeconds = 86_400
/** Confirmation mails: at most 5 a day per user, and per recipient address. */
export const verifyAllowance: MailAllowance = { limit: 5, windowSeconds: 86_400 }

/** The links of migration 92 that put an old contact e-mail back: one per user. */
export class EmailUndoStore {
  constructor(private readonly db: Db) {}

  /** A new link's token putting `oldEmail` back on `userId` (the user's earlier one stops working). */
  async create(userId: string, oldEmail: string, newEmail: string | null, now: number, changedAt = now): Promise<string> {
    const token = randomToken(24)
    await this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM kigo_gateway.email_undos WHERE user_id = $1 OR expires_at < $2', [userId, at(now)])
      await tx.query('INSERT INTO kigo_gateway.email_undos (token_hash, user_id, old_email, new_email, changed_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [digest(token), userId, oldEmail, newEmail, at(changedAt), at(now + undoTtlSeconds * 1000)])
    })
    return token
  }

  /** The change a live, unused token would undo (without using it), or null. */
  async peek(token: string, now: number): Promise<{ userId: string; oldEmail: string; newEmail: string | null } | null> {
    const rows = await this.db.query<{ user_id: string; old_email: string; new_email: string | null }>('SELECT user_id, old_email, new_email FROM kigo_gateway.email_undos WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [digest(token), at(now)])
    return rows[0] ? { userId: rows[0].user_id, oldEmail: rows[0].old_email, newEmail: rows[0].new_email } : null
  }

  /** Uses the token once: its user and the address to put back, or null when unknown, used or expired. */
  async consume(token: string, now: number): Promise<{ userId: string; oldEmail: string } | null> {
    const rows = await this.db.query<{ user_id: string; old_email: string }>('UPDATE kigo_gateway.email_undos SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id, old_email', [digest(token), at(now)])
    return rows[0] ? { userId: rows[0].user_id, oldEmail: rows[0].old_email } : null
  }

  /** The address the user's contact e-mail was changed from since `since`, or null. */
  async changedSince(userId: string, since: number): Promise<{ oldEmail: string; newEmail: string | null; changedAt: number } | null> {
    const rows = await this.db.query<{ old_email: string; new_email: string | null; changed_at: Date | string }>('SELECT old_email, new_email, changed_at FROM kigo_gateway.email_undos WHERE user_id = $1 AND changed_at > $2 AND used_at IS NULL', [userId, at(since)])
    return rows[0] ? { oldEmail: rows[0].old_email, newEmail: rows[0].new_email, changedAt: new Date(rows[0].changed_at).getTime() } : null
  }
}

export interface ContactEmail {
  store: ContactEmailStore
  /** The links that put an old address back. */
  undo: EmailUndoStore
  /** Confirmation mails per user and per recipient (verifyAllowance). */
  budget: Pick<MailBudget, 'take'>
  outbox: Pick<Outbox, 'enqueue' | 'nudge' | 'mailing'>
  /** How long a confirmation link works. */
  ttlSeconds: number
}

/** What the account page's e-mail form led to. */
export type EmailChange =
  | { outcome: 'invalid' }
  /** No mail server: a new address cannot be confirmed. */
  | { outcome: 'no_mail' }
  /** The proof of the person failed; its answer was sent. */
  | { outcome: 'unproven' }
  /** The day's confirmation mails for this user or this address are spent. */
  | { outcome: 'busy' }
  | { outcome: 'unchanged' }
  | { outcome: 'pending'; email: string }
  | { outcome: 'removed'; before: string | null }

export interface Users {
  getUserEmail(id: string): Promise<string | null>
  setUserEmail(id: string, email: string | null): Promise<boolean>
}

const hours = (seconds: number) => {
  const h = Math.round(seconds / 3600)
  return h >= 1 ? `${h} hour${h === 1 ? '' : 's'}` : `${Math.round(seconds / 60)} minutes`
}

const undoWords = (link: string) =>
  `If you did not make this change, open this link within ${undoTtlSeconds / 86_400} days: it puts this address back and signs everyone out of the account, and works once:\n\n${link}\n\nThen ask for a new password at the sign-in page; the link will come here.\n`

/** A link on `base` that puts `old` back as the contact e-mail of `userId`. */
async function undoLink(c: ContactEmail, userId: string, old: string, next: string | null, base: string, now: number, changedAt = now): Promise<string> {
  const token = await c.undo.create(userId, old, next, now, changedAt)
  return `${base}/account/email/undo?token=${encodeURIComponent(token)}`
}

/** Tells `old` that the account's address changed to `next` (or was removed), with the link that undoes it. */
export async function tellOldAddress(c: ContactEmail, userId: string, old: string, next: string | null, base: string, now: number): Promise<void> {
  const link = await undoLink(c, userId, old, next, base, now)
  await c.outbox.enqueue({
    key: `email_changed:${randomUUID()}`,
    kind: 'email_changed',
    to: old,
    subject: next === null ? 'Your kigo contact e-mail was removed' : 'Your kigo contact e-mail was changed',
    text:
      (next === null
        ? `The contact e-mail of the kigo account ${userId} was removed. kigo no longer mails this address about the account: no migration notices, no password-reset links.\n\n`
        : `The contact e-mail of the kigo account ${userId} is now ${next}. Migration notices and password-reset links for the account go there, not here.\n\n`) + undoWords(link),
    expiresAt: now + undoTtlSeconds * 1000,
  })
}

/**
 * Tells the address the account's contact e-mail was changed from, within the last day,
 * that its password was just reset: the person who changed the address may not be the owner.
 */
export async function tellOldAddressOfReset(c: ContactEmail, userId: string, base: string, now: number): Promise<void> {
  const change = await c.undo.changedSince(userId, now - recentChangeSeconds * 1000)
  if (change === null) return
  const link = await undoLink(c, userId, change.oldEmail, change.newEmail, base, now, change.changedAt)
  await c.outbox.enqueue({
    key: `email_changed:${randomUUID()}`,
    kind: 'email_changed',
    to: change.oldEmail,
    subject: 'The password of your kigo account was reset',
    text: `The password of the kigo account ${userId} was just reset by a link mailed to its new contact e-mail${change.newEmail === null ? '' : `, ${change.newEmail}`}. You are told because this address was the account's contact e-mail until less than a day ago.\n\n` + undoWords(link),
    expiresAt: now + undoTtlSeconds * 1000,
  })
  c.outbox.nudge()
}

/**
 * The account page's e-mail form for `userId`: an empty address removes it at once (the
 * old address is told); a new one waits for its owner to open the link mailed to it.
 * `proven` is asked just before anything changes (the current password, account-page.ts).
 */
export async function changeContactEmail(c: ContactEmail, users: Users, userId: string, posted: string, base: string, now: number, proven: () => Promise<boolean>): Promise<EmailChange> {
  const before = await users.getUserEmail(userId)
  if (posted === '') {
    if (before === null) {
      await c.store.cancel(userId)
      return { outcome: 'unchanged' }
    }
    if (!(await proven())) return { outcome: 'unproven' }
    await c.store.cancel(userId)
    await users.setUserEmail(userId, null)
    await tellOldAddress(c, userId, before, null, base, now)
    c.outbox.nudge()
    return { outcome: 'removed', before }
  }
  let email: string
  try {
    email = checkEmail(posted)
  } catch (err) {
    if (err instanceof InvalidInput) return { outcome: 'invalid' }
    throw err
  }
  if (email === before) {
    await c.store.cancel(userId)
    return { outcome: 'unchanged' }
  }
  if (!c.outbox.mailing) return { outcome: 'no_mail' }
  if (!(await proven())) return { outcome: 'unproven' }
  if (!(await c.budget.take('email_verify', [`user:${userId}`, `to:${email.toLowerCase()}`], verifyAllowance, now))) return { outcome: 'busy' }
  const token = await c.store.create(userId, email, c.ttlSeconds, now)
  await c.outbox.enqueue({
    key: `email_verify:${randomUUID()}`,
    kind: 'email_verify',
    to: email,
    subject: 'Confirm your kigo contact e-mail',
    text:
      `Someone (you, we hope) asked to use this address as the contact e-mail of the kigo account ${userId}. kigo mails it notices about tools that must move to a newer way of signing in, and password-reset links.\n\n` +
      `To confirm, open this link within ${hours(c.ttlSeconds)}; it works once:\n\n${base}/account/email/verify?token=${encodeURIComponent(token)}\n\n` +
      `If you did not ask, ignore this mail: the address will not be used.\n`,
    expiresAt: now + c.ttlSeconds * 1000,
  })
  c.outbox.nudge()
  return { outcome: 'pending', email }
}
