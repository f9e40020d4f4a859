// "Forgot your password?" and the mailed link's page (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// a single-use link by mail when SMTP is configured (password-reset.ts), else the
// operator's command. The answer never says whether the account exists or has an
// e-mail; asking is throttled per address like sign-in.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { errors, failureResponse, type FailureWording } from '../../common/errors.js'
import { loginPasswordProblem } from '../../common/password-rule.js'
import { userIdPattern } from '../domain/identifiers.js'
import type { AccountKit } from './account-kit.js'
import type { AccountContext } from './context.js'
import { field } from './form.js'
import { sendPage, seeOther } from './html.js'
import { forgotByMailPage, forgotPasswordPage, messagePage, resetPasswordPage } from './pages.js'

/** A reset mail the SMTP server did not take (MailUnavailable) is a 503; anything else a 500. */
const mailWording: FailureWording = {
  unavailable: () => errors.unavailable('service_unavailable', 'The mail could not be sent right now. Try again later, or ask the operator.'),
  internalMessage: 'The mail could not be sent. Ask the operator.',
}

export function registerPasswordResetPages(app: FastifyInstance, ctx: AccountContext, kit: AccountKit): void {
  const { store, sessions, throttle } = ctx
  const reset = ctx.passwordReset
  app.get('/account/forgot', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return sendPage(reply, 200, forgotPasswordPage())
    const session = await sessions.currentOrVisitor(request, reply, kit.secureOf(request))
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
    const email = userIdPattern.test(username) ? await store.getUserEmail(username).catch(() => null) : null
    if (email) {
      const token = await reset.store.create(username, reset.ttlSeconds, ctx.now())
      const link = `${request.deployment!.baseUrl}/account/reset?token=${encodeURIComponent(token)}`
      try {
        await reset.mailer.send({
          to: email,
          subject: 'Set a new kigo password',
          text: `Someone (you, we hope) asked to set a new password for the kigo account ${username}.\n\nOpen this link within ${Math.round(reset.ttlSeconds / 60)} minutes to choose one; it works once:\n\n${link}\n\nIf you did not ask, ignore this mail: your password stays as it is.\n`,
        })
      } catch (err) {
        request.log.error({ err: { message: (err as Error).message } }, 'password reset mail not sent')
        const answer = failureResponse(err, mailWording)
        return sendPage(reply.headers(answer.headers), answer.status, forgotByMailPage({ csrfToken: session.csrfToken, error: answer.message }))
      }
    }
    return sendPage(reply, 200, forgotByMailPage({ csrfToken: session.csrfToken, sent: { minutes: Math.round(reset.ttlSeconds / 60) } }))
  })

  const badLink = (reply: FastifyReply) =>
    sendPage(reply, 400, messagePage({ title: 'This link does not work', message: 'It was used already, it expired, or it is not whole. Ask for a new one.', link: { href: '/account/forgot', text: 'Forgot your password?' } }))

  app.get('/account/reset', async (request, reply) => {
    request.routeName = 'account'
    const token = (request.query as Record<string, unknown>).token
    if (!reset || typeof token !== 'string' || token.length > 200 || (await reset.store.peek(token, ctx.now())) === null) return badLink(reply)
    const session = await sessions.currentOrVisitor(request, reply, kit.secureOf(request))
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
    return seeOther(reply, '/account/login?notice=password_reset')
  })
}
