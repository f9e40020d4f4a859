// What the guide pages and the user-information API are given: the account area's context
// (the reader's session, the migration policy) and the sections the features add to the
// developer guide.
import type { AccountContext } from '../account-area/context.js'
import type { AccountAreaHost } from '../account-area/host.js'
import type { GuideSection } from '../host/guide.js'

export interface GuidesOptions {
  /**
   * The account area the host opened (account-area/host.ts): its one session store (a
   * guide page names its signed-in reader) and what its pages are given (configuration,
   * clock, migration policy).
   */
  account: AccountAreaHost
  /** Sections the features add to the developer guide (after the samples), each linked from its table of contents. */
  guideSections?: GuideSection[]
}

/** The account area's context, and the developer guide's sections. */
export interface GuidesContext extends AccountContext {
  guideSections: GuideSection[]
}
