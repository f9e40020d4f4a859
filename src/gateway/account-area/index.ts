// The account area's login, session and pages as the features built on it see them (the
// OAuth provider's authorize step, the login API's sign-in, an OpenID provider): the
// facade (facade.ts), mounted by the host in each feature's own plugin scope (host.ts),
// and the page pieces every account page shares.
export { allowOrDenyButtons, page, pageHeaders, sendPage, sendSecretPage, seeOther, type PageOptions } from './html.js'
export { copyButton } from './copy-secret.js'
export { overlapChoice, shownOnceNotice, type FormChoice, type ShownSecret } from './pages.js'
export type { Confirmation } from './confirm.js'
export { messagePage } from './pages.js'
export { loginApiStanding } from './legacy-usage.js'
export { registrantLine, type Registrant } from './registrant.js'
export { field, readForm } from './form.js'
export { returnPaths, safeNext } from './next.js'
export type { Session } from './session.js'
export { currentPasswordField, recentSignInSeconds } from './proof.js'
export type { User } from '../store/types.js'

export type { SignedInSession } from './posted-form.js'

export type { AccountArea, AccountPages } from './facade.js'
export { openAccountArea, type AccountAreaHost, type AccountHostOptions, type AreaStore } from './host.js'
