// "Forgot your password?" and the mailed link's page (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// a single-use link by mail when SMTP is configured (password-reset.ts), else a page that
// sends the user to the operator. The answer never says whether the account exists or has an
// e-mail; asking is throttled per address like sign-in, and mails at most one link per user
// per 15 minutes. A reset soon after a change of contact e-mail is told to the old address.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { loginPasswordProblem } from '../../common/password-rule.js'
import { userIdPattern } from '../domain/identifiers.js'
import type { AccountKit } from './account-kit.js'
import type { AccountContext } from './context.js'
import { field } from './form.js'
import { sendPage, seeOther } from './html.js'
import { forgotByMailPage, forgotPasswordPage, messagePage, resetPasswordPage } from './pages.js'
import { mailResetLink, resetAllowance } from './password-reset.js'
import { tellOldAddressOfReset } from './contact-email.js'

export function registerPasswordResetPages(app: FastifyInstance, ctx: AccountContext, kit: AccountKit): void {
  const { store, sessions, throttle } = ctx
  const reset = ctx.passwordReset
  app.get('/account/forgot', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return sendPage(reply, 200, forgotPasswordPage())
    const session = await sessions.currentOrVisitor(request, reply, kit.secure(request))
    return sendPage(reply, 200, forgotByMailPage({ csrfToken: session.csrfToken }))
  })

  app.post('/account/forgot', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return sendPage(reply, 200, forgotPasswordPage())
    const read = await kit.posted(request, reply)
    if (!read) return reply
    const session = read.session
    const keys = { realm: 'web' as const, ip: app.publicOrigin(request).ip }
    const wait = await throttle.check(keys)
    if (wait > 0) {
      void reply.header('retry-after', String(wait))
      return sendPage(reply, 429, forgotByMailPage({ csrfToken: session.csrfToken, error: `Too many attempts. Try again in ${Math.ceil(wait / 60)} minutes.` }))
    }
    // Each request counts against the address, as a failed sign-in does: no mail flood.
    await throttle.failed(keys)
    const username = (field(read.form, 'username') ?? '').trim()
    const base = request.deployment!.baseUrl
    // The same page for every ID, at once: whether the account exists or has an e-mail is
    // looked up only after the answer is on its way, and the mail goes through the outbox
    // (docs/security.md#the-password-reset-reveals-nothing). A failure there is logged, never answered.
    const answered = sendPage(reply, 200, forgotByMailPage({ csrfToken: session.csrfToken, sent: { minutes: Math.round(reset.ttlSeconds / 60) } }))
    setImmediate(() => {
      void (async () => {
        const email = userIdPattern.test(username) ? await store.getUserEmail(username) : null
        // One link per user per 15 minutes, however often it is asked for: a flood of
        // requests neither fills the owner's mailbox nor keeps killing the link they have.
        if (email && (await reset.budget.take('password_reset', [`user:${username}`], resetAllowance, ctx.now()))) await mailResetLink({ ...reset, now: ctx.now() }, username, email, base)
      })().catch((err: unknown) => request.log.error({ err: { message: (err as Error).message } }, 'password reset mail not recorded'))
    })
    return answered
  })

  const badLink = (reply: FastifyReply) =>
    sendPage(reply, 400, messagePage({ title: 'This link does not work', message: 'It was used already, it expired, or it is not whole. Ask for a new one.', link: { href: '/account/forgot', text: 'Forgot your password?' } }))

  app.get('/account/reset', async (request, reply) => {
    request.routeName = 'account'
    const token = (request.query as Record<string, unknown>).token
    if (!reset || typeof token !== 'string' || token.length > 200 || (await reset.store.peek(token, ctx.now())) === null) return badLink(reply)
    const session = await sessions.currentOrVisitor(request, reply, kit.secure(request))
    return sendPage(reply, 200, resetPasswordPage({ csrfToken: session.csrfToken, token }))
  })

  app.post('/account/reset', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return badLink(reply)
    const read = await kit.posted(request, reply)
    if (!read) return reply
    const session = read.session
    const token = field(read.form, 'token') ?? ''
    const next = field(read.form, 'new_password') ?? ''
    const again = field(read.form, 'confirm_password') ?? ''
    const userId = token.length > 200 ? null : await reset.store.peek(token, ctx.now())
    if (userId === null) return badLink(reply)
    const refuse = (error: string) => sendPage(reply, 400, resetPasswordPage({ csrfToken: session.csrfToken, token, error }))
    if (next === '') return refuse('Enter a new password.')
    if (next !== again) return refuse('The new password and its confirmation differ.')
    const weak = loginPasswordProblem(next, userId)
    if (weak !== null) return refuse(`${weak[0]!.toUpperCase()}${weak.slice(1)}.`)
    // Checked first, used last: a refused password does not spend the link.
    if ((await reset.store.consume(token, ctx.now())) !== userId) return badLink(reply)
    await store.setLoginPassword(userId, next)
    await store.endUserSessions(userId)
    await kit.audited(kit.by(request, userId), { kind: 'user', action: 'account.reset_password_by_mail', target: userId, before: null, after: null })
    // The password is set: a failure to tell the old address is logged, not answered.
    if (ctx.contactEmail) await tellOldAddressOfReset(ctx.contactEmail, userId, request.deployment!.baseUrl, ctx.now()).catch((err: unknown) => request.log.error({ err: { message: (err as Error).message } }, 'reset notice to the old contact e-mail not recorded'))
    return seeOther(reply, '/account/login?notice=password_reset')
  })
}
