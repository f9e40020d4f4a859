// What every part of the provider is given, with the defaults docs/gateway.md#the-oauth-provider-and-the-account-pages names.
import type { Config } from '../../common/config.js'
import type { OAuthVerifyOptions } from '../auth/oauth/verify.js'
import type { ReplayCache } from '../replay/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import type { AuditStore } from '../audit/store.js'
import type { AccountContext, AccountMigration, AccountSection, AccountStore, PasswordReset } from '../account-area/context.js'
import type { ContactEmail } from '../account-area/contact-email.js'
import type { SafeHtml } from '../../common/html.js'

export type { AccountSection, PasswordReset } from '../account-area/context.js'
/** The provider's view of the identity store: the account area's, whose consumers it verifies. */
export type ProviderStore = AccountStore
export type ProviderMigration = AccountMigration

export interface ProviderOptions {
  config: Config
  store: ProviderStore
  /** The OAuth replay cache the resource verifier uses (nonces are claimed in it alike). */
  replay: ReplayCache
  /** Failed-login throttling, shared with Basic and WSSE (docs/operations.md#throttling). */
  throttle: AttemptThrottle
  /** Clock in milliseconds (default Date.now). */
  now?: () => number
  /** Lifetime of a request token, seconds (docs/gateway.md#the-oauth-provider-and-the-account-pages: 10 minutes). */
  requestTokenTtlSeconds?: number
  /** Lifetime of a signed-in account session, seconds (default 12 hours). */
  sessionTtlSeconds?: number
  /** Lifetime of a signed-out visitor's session (login form), seconds (default 1 hour). */
  visitorSessionTtlSeconds?: number
  migration?: ProviderMigration
  /** The audit trail: a user's own changes on the account pages are recorded (actions `account.*`). */
  audit?: Pick<AuditStore, 'record'>
  /** "Forgot your password?" by mail, when an SMTP server is configured. */
  passwordReset?: PasswordReset
  /** A new contact e-mail is used once its owner confirms it by mail (account-area/contact-email.ts). */
  contactEmail?: ContactEmail
  /** Sections other parts of the account area add to the account page (below the applications). */
  accountSections?: AccountSection[]
  /** Sections other features add to the developer guide (after the samples), each linked from its table of contents. */
  guideSections?: GuideSection[]
}

/**
 * A section of the developer guide (/developers): its anchor and table-of-contents title,
 * and its body for the deployment at `base` (scheme and host, as the page is served).
 */
export interface GuideSection {
  id: string
  title: string
  render: (base: string) => SafeHtml
}

export const defaults = {
  requestTokenTtlSeconds: 600,
  sessionTtlSeconds: 12 * 60 * 60,
  visitorSessionTtlSeconds: 60 * 60,
} as const

/** The account area's context, and the provider's own: its tokens, realm and guide. */
export interface ProviderContext extends AccountContext {
  replay: ReplayCache
  requestTokenTtlSeconds: number
  realm: string
  verifyOptions: OAuthVerifyOptions
  guideSections: GuideSection[]
}
