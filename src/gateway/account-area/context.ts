// What the account area's own pages are given (sign-in, forgot and reset, the account
// page, docs/gateway.md#the-oauth-provider-and-the-account-pages), and what features built
// on the area give it: sections of the account page.
import type { Config } from '../../common/config.js'
import type { SafeHtml } from '../../common/html.js'
import type { AuditStore } from '../audit/store.js'
import type { PolicyService } from '../policy/service.js'
import type { CredentialRepository, IdentityAdministration, ProviderRepository } from '../store/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import type { UsageStore } from '../usage/store.js'
import type { Outbox } from '../mail/index.js'
import type { MailBudget } from '../mail/budget.js'
import type { ContactEmail } from './contact-email.js'
import type { PasswordResetStore } from './password-reset.js'
import type { Sessions } from './session.js'

/** The migration policy and usage, for the guide pages and the account page (docs/gateway.md#migration-controls). */
export interface AccountMigration {
  policy: PolicyService
  usage: Pick<UsageStore, 'list'>
}

/**
 * The account area's view of the identity store: sessions, the account sign-in, and the
 * administration a signed-in user may do on their own account (passwords, e-mail,
 * applications; docs/gateway.md#the-oauth-provider-and-the-account-pages).
 */
export type AccountStore = ProviderRepository &
  CredentialRepository &
  Pick<IdentityAdministration, 'setApiPassword' | 'setLoginPassword' | 'endUserSessions' | 'getUserEmail' | 'setUserEmail' | 'createConsumer' | 'updateConsumer' | 'listConsumers' | 'rotateConsumerSecret' | 'deleteConsumer'>

export interface PasswordReset {
  store: PasswordResetStore
  /** The mail goes out through the outbox, off the request's path. */
  outbox: Pick<Outbox, 'enqueue' | 'nudge'>
  ttlSeconds: number
  /** Reset mails per user (resetAllowance). */
  budget: Pick<MailBudget, 'take'>
}

/** A section of the account page, rendered for the signed-in user. */
export type AccountSection = (user: { id: string; name: string }, csrfToken: string) => Promise<SafeHtml>

export interface AccountContext {
  config: Config
  store: AccountStore
  throttle: AttemptThrottle
  now: () => number
  sessions: Sessions
  migration?: AccountMigration
  /** The audit trail: a user's own changes on the account pages are recorded (actions `account.*`). */
  audit?: Pick<AuditStore, 'record'>
  /** "Forgot your password?" by mail, when an SMTP server is configured. */
  passwordReset?: PasswordReset
  /** A new contact e-mail is used once its owner confirms it by mail (contact-email.ts). */
  contactEmail?: ContactEmail
  /** Sections the features add to the account page (below the contact e-mail), in their order. */
  accountSections: AccountSection[]
  /** Sections the features add at the top of the account page (what has access to the account), in their order. */
  accountTopSections: AccountSection[]
}
