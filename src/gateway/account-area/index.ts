// The account area's login, session and pages as the features built on it see them (the
// OAuth provider's authorize step, the login API's sign-in, an OpenID provider): one
// login form and one session cookie for all of them, the same CSRF and cookie rules, and
// the same page layout. A feature registers its routes in its own plugin and is given an
// `AccountArea`; it never reads the session cookie or renders the login form itself.
import fastifyCookie from '@fastify/cookie'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CredentialRepository, ProviderRepository, User } from '../store/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import { personProof, type PersonProof } from './proof.js'
import { html, type SafeHtml } from '../../common/html.js'
import { sendPage } from './html.js'
import { loginPage, type ShownSecret } from './pages.js'
import { Sessions, sessionBinding, type Session } from './session.js'
import { signedInPost, type SignedInSession } from './posted-form.js'
import { safeNext } from './next.js'
import { confirmFirst } from './confirm.js'
import { userActor, type AuditActor } from '../audit/audited.js'

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

export interface AccountAreaOptions {
  store: ProviderRepository & Pick<CredentialRepository, 'verifyLoginPassword'>
  /** The sign-in throttle: a wrong current password typed to prove the person counts against it. */
  throttle: AttemptThrottle
  now: () => number
  /** Lifetime of a signed-in session, seconds. */
  sessionTtlSeconds: number
  /** Lifetime of a signed-out visitor's session (it protects the login form), seconds. */
  visitorSessionTtlSeconds: number
  /** The master key: the session cookie is bound to its deployment with a key derived from it. */
  secretKey: string
}

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
  /** The signed-in user as the audit trail names them, with the client address of `request`. */
  actor(request: FastifyRequest, session: SignedInSession): AuditActor
  /** Unless the form says confirm=yes: the confirmation page, answered (confirm.ts); a post without it changes nothing. */
  confirmFirst: typeof confirmFirst
  /** Holds a new secret for the page the post redirects to, which shows it once (Sessions.holdNewSecret). */
  holdNewSecret(session: Session, slot: string, shown: ShownSecret): Promise<void>
  /** The secret held for this session under `slot`, once, or null (a reload, another session, too late). */
  takeNewSecret(session: Session, slot: string): Promise<ShownSecret | null>
  /** Proof of the person (the current password, or a recent sign-in) for a change a stolen session must not make. */
  proof: PersonProof
}

/**
 * Registers the cookie parser and the deployment check on `app` (a feature's own,
 * encapsulated plugin, whose error renderer answers a host of no deployment) and returns
 * the account area as that plugin sees it. The session lives in the identity store, so
 * every gateway shares it.
 */
export async function accountArea(app: FastifyInstance, o: AccountAreaOptions): Promise<AccountArea> {
  if (!app.hasRequestDecorator('cookies')) await app.register(fastifyCookie)
  // Only the deployments answer (docs/gateway.md#deployments): a page, a sign-in or a session asked for on
  // another Host is not ours (400 unknown_deployment, in the feature's own format).
  app.addHook('onRequest', app.requireDeployment)
  const sessions = new Sessions(o.store, { ttlSeconds: o.sessionTtlSeconds, visitorTtlSeconds: o.visitorSessionTtlSeconds }, o.now, sessionBinding(o.secretKey))
  const secure = (request: FastifyRequest) => app.publicOrigin(request).scheme === 'https'
  return {
    session: (request) => sessions.current(request),
    async signedInUser(request) {
      return (await sessions.current(request))?.user ?? null
    },
    async requireSignIn(request, reply, { next, context }) {
      const session = await sessions.currentOrVisitor(request, reply, secure(request))
      if (session.user) return session as SignedInSession
      const back = safeNext(next) ?? '/account'
      await sendPage(reply, 200, loginPage({ csrfToken: session.csrfToken, next: back, ...(context ? { context } : {}) }))
      return null
    },
    loginUrl: (next) => `/account/login?next=${encodeURIComponent(safeNext(next) ?? '/account')}`,
    csrfField: (session) => html`<input type="hidden" name="csrf_token" value="${session.csrfToken}">`,
    signedInPost: (request, reply) => signedInPost(sessions, request, reply),
    async ownedPost(request, reply, own) {
      request.routeName = 'account'
      const posted = await signedInPost(sessions, request, reply)
      if (!posted) return null
      const item = await own(request, reply, posted.session)
      return item === null ? null : { posted, item }
    },
    secure,
    actor: (request, session) => userActor(session.user.id, app.publicOrigin(request).ip),
    confirmFirst,
    holdNewSecret: (session, slot, shown) => sessions.holdNewSecret(session, slot, shown),
    takeNewSecret: (session, slot) => sessions.takeNewSecret(session, slot),
    proof: personProof({ store: o.store, throttle: o.throttle, now: o.now, ipOf: (request) => app.publicOrigin(request).ip }),
  }
}
