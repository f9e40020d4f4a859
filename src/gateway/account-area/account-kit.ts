// What the account area's pages share (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// the notices, the posted-form opening, the audit of a user's own change, the
// confirmation step and the account page itself. Built once by registerAccount
// (account.ts) and given to each group of pages, the provider's application pages too.
import { oauth1Standing } from '../policy/oauth1-standing.js'
import { registrationClosedText } from '../policy/registration.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AuditActor, Audited } from '../audit/audited.js'
import { auditTrail, userActor } from '../audit/audited.js'
import type { AccountContext } from './context.js'
import { sendPage } from './html.js'
import { legacyClients, loginApiStanding } from './legacy-usage.js'
import { accountPage, type RegisterForm } from './pages.js'
import { confirmFirst } from './confirm.js'
import { postedForm, signedInPost, type Expired, type SignedInSession } from './posted-form.js'
import type { Session } from './session.js'
import { personProof, type PersonProof } from './proof.js'

// Notices the account page shows after a redirect; the query names one, never its text.
const notices: Record<string, string> = {
  revoked: 'Access was revoked. The application can no longer use your account.',
  reset: 'Your API password was reset. Update the clients that use it.',
  app_edited: 'Your changes to the application were saved and apply at once.',
  app_deleted: 'The application was deleted, with every access it had.',
  signed_out: 'You are signed out.',
  password_changed: 'Your password was changed. You were signed out everywhere else.',
  email: 'Your contact e-mail was saved.',
  email_pending: 'We mailed a link to the new address. It becomes your contact e-mail when you open that link; until then nothing changes.',
  email_verified: 'Your new contact e-mail is confirmed and in use.',
  email_removed: 'Your contact e-mail was removed. kigo no longer mails you about this account.',
  password_reset: 'Your password was set. Sign in with the new one; you were signed out everywhere.',
  oidc_revoked: 'The site’s access was revoked. Signing in there again asks you first.',
}

/** The empty registration form of the account page. */
export const emptyRegisterForm: RegisterForm = { name: '', callback: '', home: '', scopes: ['read_public'] }

export interface AccountKit {
  /** Whether the request reached the deployment over https (the cookie's Secure flag). */
  secureOf(request: FastifyRequest): boolean
  /** The notice named by the query, if it is one of ours. */
  noticeOf(request: FastifyRequest): string | undefined
  /** A readable form with the session's CSRF token (signed in or not), or null after answering. */
  posted(request: FastifyRequest, reply: FastifyReply, expired?: Expired): Promise<{ session: Session; form: URLSearchParams } | null>
  /** A post of a signed-in user with a valid CSRF token, or null after answering. */
  signedInPost(request: FastifyRequest, reply: FastifyReply): Promise<{ session: SignedInSession; form: URLSearchParams } | null>
  /** Records a change in the audit trail; a failed write is logged and the change stands. */
  audited: Audited
  /** The user `user` acting from the request's client address. */
  by(request: FastifyRequest, user: string): AuditActor
  /** Unless the form says confirm=yes: the confirmation page (its button posts the same form again, confirmed). */
  confirmFirst: typeof confirmFirst
  /** Proof of the person for a change a stolen session must not make (proof.ts). */
  proof: PersonProof
  /** The account page for the signed-in user, with the registration form as given and an optional notice or password error. */
  renderAccount(reply: FastifyReply, status: number, session: SignedInSession, form: RegisterForm, notice?: string, passwordError?: string): Promise<FastifyReply>
}

export function accountKit(app: FastifyInstance, ctx: AccountContext): AccountKit {
  const { store, sessions } = ctx
  return {
    secureOf: (request) => app.publicOrigin(request).scheme === 'https',
    noticeOf(request) {
      const n = (request.query as Record<string, unknown>).notice
      return typeof n === 'string' && Object.hasOwn(notices, n) ? notices[n] : undefined
    },
    posted(request, reply, expired) {
      request.routeName = 'account'
      return postedForm(sessions, request, reply, expired)
    },
    signedInPost(request, reply) {
      request.routeName = 'account'
      return signedInPost(sessions, request, reply)
    },
    audited: auditTrail(ctx.audit, app.log),
    by: (request, user) => userActor(user, app.publicOrigin(request).ip),
    confirmFirst,
    proof: personProof({ store, throttle: ctx.throttle, now: ctx.now, ipOf: (request) => app.publicOrigin(request).ip }),
    async renderAccount(reply, status, session, form, notice, passwordError) {
      const migration = ctx.migration
      const [api, authorized, registered, usage, lastUsed, email, sections, emailPending] = await Promise.all([
        store.getApiPassword(session.user.id),
        store.listAuthorizedApplications(session.user.id),
        store.listConsumers(session.user.id),
        migration ? migration.usage.list({ user: session.user.id, limit: 200 }) : Promise.resolve([]),
        migration ? migration.appUse.forUser(session.user.id) : Promise.resolve(new Map<string, number>()),
        store.getUserEmail(session.user.id),
        Promise.all(ctx.accountSections.map((section) => section(session.user, session.csrfToken))),
        ctx.contactEmail ? ctx.contactEmail.store.pending(session.user.id, ctx.now()) : Promise.resolve(null),
      ])
      const now = ctx.now()
      const policies = migration?.policy.current()
      const legacy = policies ? legacyClients(usage, policies, session.user.id, now) : null
      const retiring = policies ? oauth1Standing(policies.oauth1, now, session.user.id) : null
      return sendPage(
        reply,
        status,
        accountPage({
          user: session.user,
          csrfToken: session.csrfToken,
          apiPassword: api?.apiPassword ?? '',
          authorized: authorized.map((a) => ({ ...a, lastUsedAt: lastUsed.get(a.consumer.key) ?? null, retiring: retiring?.(a.consumer.key) ?? null })),
          registered,
          // The oauth1 policy may have closed the registration of new applications (policy/registration.ts).
          form: policies?.oauth1.registration_closed === true ? { ...form, closed: registrationClosedText } : form,
          legacy,
          email,
          emailPending,
          emailByMail: ctx.contactEmail?.outbox.mailing ?? false,
          sections,
          ...(policies ? { loginApi: loginApiStanding(policies.login_api, now) } : {}),
          ...(notice ? { notice } : {}),
          ...(passwordError ? { passwordError } : {}),
        }),
      )
    },
  }
}
