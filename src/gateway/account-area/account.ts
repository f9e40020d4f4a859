// The account area's own pages (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// sign-in and sign-out (sign-in.ts), "Forgot your password?" (password-reset-pages.ts),
// the account page (account-page.ts), the page for people whose tools must move (moving-page.ts) and a new contact e-mail's confirmation (contact-email-pages.ts). Every post passes one opening (posted-form.ts): a
// readable form with the session's CSRF token. What cannot be undone asks first: the
// button posts without `confirm=yes` and gets a confirmation page, whose button posts
// again with it (no script). The host (host.ts) mounts them with the area they share.
import type { FastifyInstance } from 'fastify'
import type { AccountKit } from './account-kit.js'
import { registerAccountPage } from './account-page.js'
import { registerContactEmailRoutes } from './contact-email-pages.js'
import type { AccountContext } from './context.js'
import { registerPasswordResetPages } from './password-reset-pages.js'
import { registerSignIn } from './sign-in.js'
import { registerMovingPage } from './moving-page.js'

export function registerAccount(app: FastifyInstance, ctx: AccountContext, kit: AccountKit): void {
  registerSignIn(app, ctx, kit)
  registerPasswordResetPages(app, ctx, kit)
  registerAccountPage(app, ctx, kit)
  registerMovingPage(app, ctx)
  if (ctx.contactEmail) registerContactEmailRoutes(app, { contactEmail: ctx.contactEmail, users: ctx.store, sessions: ctx.sessions, now: ctx.now }, kit)
}
