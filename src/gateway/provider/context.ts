// What every part of the provider is given, with the defaults docs/gateway.md#the-oauth-provider-and-the-account-pages names.
import type { Config } from '../../common/config.js'
import type { OAuthVerifyOptions } from '../auth/oauth/verify.js'
import type { ReplayCache } from '../replay/types.js'
import type { CredentialRepository, IdentityAdministration, ProviderRepository } from '../store/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import type { Sessions } from './session.js'
import type { SafeHtml } from './html.js'
import type { PolicyService } from '../policy/service.js'
import type { AppUseStore } from '../usage/app-use.js'
import type { UsageStore } from '../usage/store.js'
import type { AuditStore } from '../audit/store.js'
import type { PasswordResetStore } from './password-reset.js'
import type { Outbox } from '../mail/index.js'
import type { ContactEmail } from './contact-email.js'

/** The migration policy and usage, for the guide pages and the account page (docs/gateway.md#migration-controls). */
export interface ProviderMigration {
  policy: PolicyService
  usage: Pick<UsageStore, 'list'>
  appUse: Pick<AppUseStore, 'forUser'>
}

/**
 * The provider's view of the identity store: its own repository, the credential lookups
 * (the consumer at initiate and token, the account sign-in), and the administration a
 * signed-in user may do on their own account (passwords, e-mail, applications; docs/gateway.md#the-oauth-provider-and-the-account-pages).
 */
export type ProviderStore = ProviderRepository &
  CredentialRepository &
  Pick<IdentityAdministration, 'setApiPassword' | 'setLoginPassword' | 'endUserSessions' | 'getUserEmail' | 'setUserEmail' | 'createConsumer' | 'listConsumers' | 'rotateConsumerSecret' | 'deleteConsumer'>

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
  /** A new contact e-mail is used once its owner confirms it by mail (mail/contact-email.ts). */
  contactEmail?: ContactEmail
  /** Sections other parts of the account area add to the account page (below the applications). */
  accountSections?: AccountSection[]
  /** Sections other features add to the developer guide (after the samples), each linked from its table of contents. */
  guideSections?: GuideSection[]
}

export interface PasswordReset {
  store: PasswordResetStore
  /** The mail goes out through the outbox, off the request's path. */
  outbox: Pick<Outbox, 'enqueue' | 'nudge'>
  ttlSeconds: number
}

/** A section of the account page, rendered for the signed-in user. */
export type AccountSection = (user: { id: string; name: string }, csrfToken: string) => Promise<SafeHtml>

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

export interface ProviderContext {
  config: Config
  store: ProviderStore
  replay: ReplayCache
  throttle: AttemptThrottle
  now: () => number
  requestTokenTtlSeconds: number
  sessions: Sessions
  realm: string
  verifyOptions: OAuthVerifyOptions
  migration?: ProviderMigration
  audit?: Pick<AuditStore, 'record'>
  passwordReset?: PasswordReset
  contactEmail?: ContactEmail
  accountSections: AccountSection[]
  guideSections: GuideSection[]
}
