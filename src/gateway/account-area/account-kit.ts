// What only the account page adds to the account area's facade (facade.ts): the notices a
// redirect names and the page itself, rendered from everything the area is given
// (host.ts mounts them).
import type { FastifyRequest } from 'fastify'
import type { AccountContext, AccountSection } from './context.js'
import type { AccountPages } from './facade.js'
import { sendPage } from './html.js'
import { legacyClients, loginApiStanding } from './legacy-usage.js'
import { accountPage } from './pages.js'

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

/** The account area as the account page's groups of pages use it (facade.ts). */
export type AccountKit = AccountPages

/** The notice named by the query, if it is one of ours. */
export function noticeOf(request: FastifyRequest): string | undefined {
  const n = (request.query as Record<string, unknown>).notice
  return typeof n === 'string' && Object.hasOwn(notices, n) ? notices[n] : undefined
}

/** The account page of the signed-in user (AccountPages.renderAccount), from everything the account area is given. */
export function accountPageRenderer(ctx: AccountContext): AccountPages['renderAccount'] {
  const { store } = ctx
  return async (reply, status, session, { notice, passwordError, replaced } = {}) => {
    const migration = ctx.migration
    const rendered = (sections: AccountSection[]) => Promise.all(sections.map((section) => (section === replaced?.section ? Promise.resolve(replaced.html) : section(session.user, session.csrfToken))))
    const [api, usage, email, topSections, sections, emailPending] = await Promise.all([
      store.getApiPassword(session.user.id),
      migration ? migration.usage.list({ user: session.user.id, limit: 200 }) : Promise.resolve([]),
      store.getUserEmail(session.user.id),
      rendered(ctx.accountTopSections),
      rendered(ctx.accountSections),
      ctx.contactEmail ? ctx.contactEmail.store.pending(session.user.id, ctx.now()) : Promise.resolve(null),
    ])
    const now = ctx.now()
    const policies = migration?.policy.current()
    const legacy = policies ? legacyClients(usage, policies, session.user.id, now) : null
    return sendPage(
      reply,
      status,
      accountPage({
        user: session.user,
        csrfToken: session.csrfToken,
        apiPassword: api?.apiPassword ?? '',
        legacy,
        email,
        emailPending,
        emailByMail: ctx.contactEmail?.outbox.mailing ?? false,
        topSections,
        sections,
        ...(policies ? { loginApi: loginApiStanding(policies.login_api, now) } : {}),
        ...(notice ? { notice } : {}),
        ...(passwordError ? { passwordError } : {}),
      }),
    )
  }
}
