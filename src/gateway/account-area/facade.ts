// The account area as the pages built on it see it (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// the account area's own pages, the OAuth provider's authorize step and application
// pages, the login API's sign-in, OpenID Connect. One login form and one session cookie
// for all of them, the same CSRF and cookie rules, and the same page layout. A feature
// registers its routes in its own plugin and mounts the area there (host.ts); it never
// reads the session cookie or renders the login form itself.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SafeHtml } from '../../common/html.js'
import type { AuditActor, Audited } from '../audit/audited.js'
import type { User } from '../store/types.js'
import type { confirmFirst } from './confirm.js'
import type { AccountSection } from './context.js'
import type { ShownSecret } from './pages.js'
import type { Expired, SignedInSession } from './posted-form.js'
import type { PersonProof } from './proof.js'
import type { Session } from './session.js'

export interface AccountArea {
  /** The request's session, or null when it has none (nothing is set on the reply). */
  session(request: FastifyRequest): Promise<Session | null>
  /** The signed-in user of a request, or null. */
  signedInUser(request: FastifyRequest): Promise<User | null>
  /**
   * The signed-in session, or null after answering with the account login form (200),
   * whose post signs the visitor in and sends them back to `next` (a local path allowed
   * by `safeNext`; add a feature's path to `returnPaths` in next.ts). `context` says,
   * above the form, why the visitor is asked to sign in.
   */
  requireSignIn(request: FastifyRequest, reply: FastifyReply, o: { next: string; context?: string }): Promise<SignedInSession | null>
  /** Where to send a browser (303) to sign in and come back to `next`. */
  loginUrl(next: string): string
  /** The hidden CSRF field of a form posted by `session`. */
  csrfField(session: Session): SafeHtml
  /** A readable form with the session's CSRF token (signed in or not), or null after answering. */
  posted(request: FastifyRequest, reply: FastifyReply, expired?: Expired): Promise<{ session: Session; form: URLSearchParams } | null>
  /**
   * A form post by a signed-in visitor carrying their session's CSRF token, or null
   * after answering: 400/415 for an unreadable form, 403 "Form expired" for a missing or
   * wrong token, 403 "Not signed in" for a signed-out session.
   */
  signedInPost(request: FastifyRequest, reply: FastifyReply): Promise<{ session: SignedInSession; form: URLSearchParams } | null>
  /**
   * A signed-in post (as signedInPost) about the user's own thing named in the path: `own`
   * finds it, or answers (its 404) and gives null. Null after any answer.
   */
  ownedPost<T>(request: FastifyRequest, reply: FastifyReply, own: (request: FastifyRequest, reply: FastifyReply, session: SignedInSession) => Promise<T | null>): Promise<{ posted: { session: SignedInSession; form: URLSearchParams }; item: T } | null>
  /** Whether the request reached the deployment over https (the cookie's Secure flag). */
  secure(request: FastifyRequest): boolean
  /** The notice named by the query (`?notice=`), if it is one of the account area's. */
  noticeOf(request: FastifyRequest): string | undefined
  /** The signed-in user as the audit trail names them, with the client address of `request`. */
  actor(request: FastifyRequest, session: SignedInSession): AuditActor
  /** The user `user` acting from the request's client address. */
  by(request: FastifyRequest, user: string): AuditActor
  /** Records a change in the audit trail; a failed write is logged and the change stands. */
  audited: Audited
  /** Unless the form says confirm=yes: the confirmation page, answered (confirm.ts); a post without it changes nothing. */
  confirmFirst: typeof confirmFirst
  /** Holds a new secret for the page the post redirects to, which shows it once (Sessions.holdNewSecret). */
  holdNewSecret(session: Session, slot: string, shown: ShownSecret): Promise<void>
  /** The secret held for this session under `slot`, once, or null (a reload, another session, too late). */
  takeNewSecret(session: Session, slot: string): Promise<ShownSecret | null>
  /** Proof of the person (the current password, or a recent sign-in) for a change a stolen session must not make. */
  proof: PersonProof
}

/** What the account page shows beside the account: a notice, the password form's error, a section as a post left it. */
export interface AccountPageState {
  notice?: string
  passwordError?: string
  /** A feature's section shown as given in place of its usual rendering: its form as posted, with why it was refused. */
  replaced?: { section: AccountSection; html: SafeHtml }
}

/** The area as the account page and the pages that answer with it see it (a feature's form posted from the account page). */
export interface AccountPages extends AccountArea {
  /** The account page for the signed-in user. */
  renderAccount(reply: FastifyReply, status: number, session: SignedInSession, state?: AccountPageState): Promise<FastifyReply>
}
