// What every part of the provider is given, with the defaults docs/gateway.md#the-oauth-provider-and-the-account-pages names.
import type { OAuthVerifyOptions } from '../auth/oauth/verify.js'
import type { ReplayCache } from '../replay/types.js'
import type { AccountContext, AccountMigration, AccountStore } from '../account-area/context.js'
import type { AccountAreaHost } from '../account-area/host.js'
import type { GuideSection } from '../host/guide.js'

export type { AccountSection, PasswordReset } from '../account-area/context.js'
export type { GuideSection } from '../host/guide.js'
/** The provider's view of the identity store: the account area's, whose consumers it verifies. */
export type ProviderStore = AccountStore
export type ProviderMigration = AccountMigration

export interface ProviderOptions {
  /**
   * The account area the host opened (account-area/host.ts): its one session store, and
   * what its pages are given (configuration, identity store, throttle, clock, migration
   * policy and usage, audit trail, mail), which the provider's pages share.
   */
  account: AccountAreaHost
  /** The OAuth replay cache the resource verifier uses (nonces are claimed in it alike). */
  replay: ReplayCache
  /** Lifetime of a request token, seconds (docs/gateway.md#the-oauth-provider-and-the-account-pages: 10 minutes). */
  requestTokenTtlSeconds?: number
  /** Sections the features add to the developer guide (after the samples), each linked from its table of contents. */
  guideSections?: GuideSection[]
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
