// The account area (docs/gateway.md#the-oauth-provider-and-the-account-pages): sign-in (throttled per user and per address, docs/operations.md#throttling),
// sign-out, registering applications, revoking authorized applications, and the API
// password used by Basic and WSSE clients. Every post checks the session's CSRF token.
// What cannot be undone (resetting the API password, revoking an application, rotating or
// deleting one's application) asks first: the button posts without `confirm=yes` and gets
// a confirmation page, whose button posts again with it (no script). The user's own
// changes go to the audit trail as `account.*` actions (docs/operations.md#the-audit-trail).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { randomToken } from '../../common/secrets.js'
import { InvalidInput } from '../store/validation.js'
import { type User } from '../store/types.js'
import { userIdPattern } from '../domain/identifiers.js'
import type { ProviderContext } from './context.js'
import { field, readForm } from './form.js'
import { sendPage, seeOther } from './html.js'
import { signedInPost as readSignedInPost } from './signed-in-post.js'
import { accountPage, applicationPage, confirmPage, forgotByMailPage, forgotPasswordPage, loginPage, messagePage, resetPasswordPage, type RegisterForm } from './pages.js'
import { scopesFromCheckboxes } from './scopes.js'
import { csrfMatches, type Session } from './session.js'
import { loginPasswordProblem } from '../../common/password-rule.js'
import { isLegacyMethod, type LegacyMethod } from '../policy/types.js'
import { legacyClientView } from './legacy-usage.js'
import { oauthUseByFamily } from '../usage/moved.js'
import { safeNext } from './next.js'
import { mailResetLink } from './password-reset.js'
import { changeContactEmail } from './contact-email.js'

/** Same size as the operator API's generated passwords. */
const apiPasswordBytes = 18


// Notices the account page shows after a redirect; the query names one, never its text.
const notices: Record<string, string> = {
  revoked: 'Access was revoked. The application can no longer use your account.',
  reset: 'Your API password was reset. Update the clients that use it.',
  registered: 'Your application is registered. Keep the consumer secret private.',
  rotated: 'A new consumer secret was made. The old one no longer works: update the application.',
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

export function registerAccount(app: FastifyInstance, ctx: ProviderContext): void {
  const { store, sessions, throttle } = ctx
  const secureOf = (request: FastifyRequest) => app.publicOrigin(request).scheme === 'https'
  const noticeOf = (request: FastifyRequest) => {
    const n = (request.query as Record<string, unknown>).notice
    return typeof n === 'string' && Object.hasOwn(notices, n) ? notices[n] : undefined
  }

  const formExpired = (reply: FastifyReply) =>
    sendPage(reply, 403, messagePage({ title: 'Form expired', message: 'This form is out of date or did not come from kigo. Go back, reload the page and try again.', link: { href: '/account', text: 'Your account' } }))

  /** A post of a signed-in user with a valid CSRF token, or the answer already sent. */
  const signedInPost = (request: FastifyRequest, reply: FastifyReply) => {
    request.routeName = 'account'
    return readSignedInPost(sessions, request, reply)
  }

  /** Records the user's own change; a failed write is logged and the change stands (as for the operator's). */
  const audited = async (request: FastifyRequest, event: { action: string; kind: 'user' | 'app' | 'token'; target: string; before: unknown; after: unknown }) => {
    if (!ctx.audit) return
    try {
      await ctx.audit.record({ ...event, address: app.publicOrigin(request).ip })
    } catch (err) {
      request.log.warn({ err: { message: (err as Error).message }, action: event.action, target: event.target }, 'audit record failed')
    }
  }

  /** Unless the form says confirm=yes: the confirmation page (its button posts the same form again, confirmed). */
  const confirmFirst = (reply: FastifyReply, session: Session & { user: User }, form: URLSearchParams, o: { action: string; title: string; message: string; button: string; fields?: Record<string, string> }) => {
    if (field(form, 'confirm') === 'yes') return null
    return sendPage(reply, 200, confirmPage({ user: session.user, csrfToken: session.csrfToken, ...o }))
  }

  const renderAccount = async (reply: FastifyReply, status: number, session: Session & { user: User }, form: RegisterForm, notice?: string, passwordError?: string) => {
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
    const oauthUse = oauthUseByFamily(usage)
    const legacy = migration
      ? usage.filter((r) => isLegacyMethod(r.method)).map((r) => legacyClientView(r, migration.policy.current()[r.method as LegacyMethod], session.user.id, now, oauthUse(r)))
      : null
    return sendPage(
      reply,
      status,
      accountPage({
        user: session.user,
        csrfToken: session.csrfToken,
        apiPassword: api?.apiPassword ?? '',
        authorized: authorized.map((a) => ({ ...a, lastUsedAt: lastUsed.get(a.consumer.key) ?? null })),
        registered,
        form,
        legacy,
        email,
        emailPending,
        emailByMail: ctx.contactEmail?.outbox.mailing ?? false,
        sections,
        ...(notice ? { notice } : {}),
        ...(passwordError ? { passwordError } : {}),
      }),
    )
  }

  // ---- sign-in and sign-out --------------------------------------------------------------

  app.get('/account/login', async (request, reply) => {
    request.routeName = 'account'
    const next = safeNext((request.query as Record<string, string>).next) ?? '/account'
    const session = await sessions.currentOrVisitor(request, reply, secureOf(request))
    if (session.user) return seeOther(reply, next)
    const notice = noticeOf(request)
    return sendPage(reply, 200, loginPage({ csrfToken: session.csrfToken, next, ...(notice ? { notice } : {}) }))
  })

  app.post('/account/login', async (request, reply) => {
    request.routeName = 'account'
    const read = readForm(request)
    if (!read.ok) return sendPage(reply, read.status, messagePage({ title: 'Bad form', message: read.message }))
    const form = read.form
    const session = await sessions.current(request)
    if (!csrfMatches(session, field(form, 'csrf_token'))) {
      return sendPage(reply, 403, messagePage({ title: 'Form expired', message: 'The sign-in form is out of date, or your browser does not keep cookies. Reload the page and try again.', link: { href: '/account/login', text: 'Sign in' } }))
    }
    const visitor = session!
    const username = field(form, 'username') ?? ''
    const password = field(form, 'password') ?? ''
    const next = safeNext(field(form, 'next')) ?? '/account'
    const again = (status: number, error: string) => sendPage(reply, status, loginPage({ csrfToken: visitor.csrfToken, next, username, error }))

    // The rules of throttle/attempts.ts, counted apart from API failures (realm "web");
    // checked before the password is, so a locked-out account reveals nothing about it.
    const attempt = { realm: 'web' as const, user: userIdPattern.test(username) ? username : undefined, ip: app.publicOrigin(request).ip }
    if (throttle.locked?.(attempt) === true) return again(403, 'This account is locked by the operator. Ask them to unlock it.')
    const wait = await throttle.check(attempt)
    if (wait > 0) {
      void reply.header('retry-after', String(wait))
      return again(429, `Too many failed sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? 's' : ''}.`)
    }
    if (username === '' || password === '') return again(400, 'Enter your user ID and password.')
    const user = await store.verifyLoginPassword(username, password)
    if (!user) {
      await throttle.failed(attempt)
      return again(403, 'The user ID or password is not right.')
    }
    await throttle.succeeded({ ...attempt, user: user.id })
    // A new session id at sign-in: an id planted before it is worth nothing after.
    await store.deleteWebSession(visitor.id)
    await sessions.start(reply, user, secureOf(request))
    return seeOther(reply, next)
  })

  // "Forgot your password?": a single-use link by mail when SMTP is configured
  // (password-reset.ts), else a page that sends the user to the operator. The answer never
  // says whether the account exists or has an e-mail; asking is throttled per address like sign-in.
  const reset = ctx.passwordReset
  app.get('/account/forgot', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return sendPage(reply, 200, forgotPasswordPage())
    const session = await sessions.currentOrVisitor(request, reply, secureOf(request))
    return sendPage(reply, 200, forgotByMailPage({ csrfToken: session.csrfToken }))
  })

  app.post('/account/forgot', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return sendPage(reply, 200, forgotPasswordPage())
    const read = readForm(request)
    if (!read.ok) return sendPage(reply, read.status, messagePage({ title: 'Bad form', message: read.message }))
    const session = await sessions.current(request)
    if (!csrfMatches(session, field(read.form, 'csrf_token'))) return formExpired(reply)
    const keys = { realm: 'web' as const, ip: app.publicOrigin(request).ip }
    const wait = await throttle.check(keys)
    if (wait > 0) {
      void reply.header('retry-after', String(wait))
      return sendPage(reply, 429, forgotByMailPage({ csrfToken: session!.csrfToken, error: `Too many attempts. Try again in ${Math.ceil(wait / 60)} minutes.` }))
    }
    // Each request counts against the address, as a failed sign-in does: no mail flood.
    await throttle.failed(keys)
    const username = (field(read.form, 'username') ?? '').trim()
    const origin = app.publicOrigin(request)
    // The same page for every ID, at once: whether the account exists or has an e-mail is
    // looked up only after the answer is on its way, and the mail goes through the outbox
    // (docs/security.md#the-password-reset-reveals-nothing). A failure there is logged, never answered.
    const answered = sendPage(reply, 200, forgotByMailPage({ csrfToken: session!.csrfToken, sent: { minutes: Math.round(reset.ttlSeconds / 60) } }))
    setImmediate(() => {
      void (async () => {
        const email = userIdPattern.test(username) ? await store.getUserEmail(username) : null
        if (email) await mailResetLink({ ...reset, now: ctx.now() }, username, email, `${origin.scheme}://${origin.host}`)
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
    const session = await sessions.currentOrVisitor(request, reply, secureOf(request))
    return sendPage(reply, 200, resetPasswordPage({ csrfToken: session.csrfToken, token }))
  })

  app.post('/account/reset', async (request, reply) => {
    request.routeName = 'account'
    if (!reset) return badLink(reply)
    const read = readForm(request)
    if (!read.ok) return sendPage(reply, read.status, messagePage({ title: 'Bad form', message: read.message }))
    const session = await sessions.current(request)
    if (!csrfMatches(session, field(read.form, 'csrf_token'))) return formExpired(reply)
    const token = field(read.form, 'token') ?? ''
    const next = field(read.form, 'new_password') ?? ''
    const again = field(read.form, 'confirm_password') ?? ''
    const userId = token.length > 200 ? null : await reset.store.peek(token, ctx.now())
    if (userId === null) return badLink(reply)
    const refuse = (error: string) => sendPage(reply, 400, resetPasswordPage({ csrfToken: session!.csrfToken, token, error }))
    if (next === '') return refuse('Enter a new password.')
    if (next !== again) return refuse('The new password and its confirmation differ.')
    const weak = loginPasswordProblem(next, userId)
    if (weak !== null) return refuse(`${weak[0]!.toUpperCase()}${weak.slice(1)}.`)
    // Checked first, used last: a refused password does not spend the link.
    if ((await reset.store.consume(token, ctx.now())) !== userId) return badLink(reply)
    await store.setLoginPassword(userId, next)
    await store.endUserSessions(userId)
    await audited(request, { kind: 'user', action: 'account.reset_password_by_mail', target: userId, before: null, after: null })
    return seeOther(reply, '/account/login?notice=password_reset')
  })

  app.post('/account/logout', async (request, reply) => {
    request.routeName = 'account'
    const read = readForm(request)
    if (!read.ok) return sendPage(reply, read.status, messagePage({ title: 'Bad form', message: read.message }))
    const session = await sessions.current(request)
    if (!csrfMatches(session, field(read.form, 'csrf_token'))) return formExpired(reply)
    await sessions.end(session!, reply, secureOf(request))
    return seeOther(reply, '/account/login?notice=signed_out')
  })

  // ---- the account page ---------------------------------------------------------------------

  app.get('/account', async (request, reply) => {
    request.routeName = 'account'
    const session = await sessions.current(request)
    if (!session?.user) return seeOther(reply, '/account/login?next=%2Faccount')
    return renderAccount(reply, 200, session as Session & { user: User }, { name: '', callback: '', scopes: ['read_public'] }, noticeOf(request))
  })

  app.post('/account/apps', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const { session, form } = ok
    const input: RegisterForm = {
      name: (field(form, 'name') ?? '').trim(),
      callback: (field(form, 'callback') ?? '').trim(),
      scopes: scopesFromCheckboxes(form.getAll('scope')),
    }
    const invalid = (error: string) => renderAccount(reply, 400, session, { ...input, error })
    if (input.name === '') return invalid('Give the application a name.')
    if (input.scopes.length === 0) return invalid('Choose at least one scope.')
    try {
      const { consumer } = await store.createConsumer({ name: input.name, ownerId: session.user.id, scopes: input.scopes, callbackUrl: input.callback === '' ? null : input.callback })
      await audited(request, { kind: 'app', action: 'account.app_create', target: consumer.key, before: null, after: { user: session.user.id, name: consumer.name, scopes: consumer.scopes, callback_url: consumer.callbackUrl } })
      return seeOther(reply, `/account/apps/${encodeURIComponent(consumer.key)}?notice=registered`)
    } catch (err) {
      if (err instanceof InvalidInput) return invalid(err.field === 'callbackUrl' ? `The callback ${err.message.replace(/^callback URL /, 'URL ')}.` : `The ${err.message}.`)
      throw err
    }
  })

  app.get('/account/apps/:key', async (request, reply) => {
    request.routeName = 'account'
    const session = await sessions.current(request)
    const key = (request.params as { key: string }).key
    if (!session?.user) return seeOther(reply, '/account/login?next=%2Faccount')
    const found = await store.getConsumer(key)
    if (!found || found.consumer.ownerId !== session.user.id) {
      return sendPage(reply, 404, messagePage({ user: session.user, csrfToken: session.csrfToken, title: 'No such application', message: 'You have no application with this key.', link: { href: '/account', text: 'Your account' } }))
    }
    const origin = app.publicOrigin(request)
    const notice = noticeOf(request)
    return sendPage(
      reply,
      200,
      applicationPage({ user: session.user, csrfToken: session.csrfToken, consumer: found.consumer, secret: found.secret, baseUrl: `${origin.scheme}://${origin.host}`, ...(notice ? { notice } : {}) }),
    )
  })

  app.post('/account/revoke', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const key = field(ok.form, 'consumer_key')
    if (key === null || key === '') return sendPage(reply, 400, messagePage({ title: 'Bad form', message: 'Which application? The form named none.' }))
    const name = (await store.listAuthorizedApplications(ok.session.user.id)).find((a) => a.consumer.key === key)?.consumer.name ?? key
    const asked = confirmFirst(reply, ok.session, ok.form, { action: '/account/revoke', title: `Revoke ${name}?`, message: `${name} will no longer be able to use your account. To let it in again, you would have to authorize it again from the application.`, button: 'Revoke access', fields: { consumer_key: key } })
    if (asked) return asked
    await store.revokeUserTokensForConsumer(ok.session.user.id, key)
    await audited(request, { kind: 'token', action: 'account.revoke', target: key, before: { user: ok.session.user.id, application: name }, after: null })
    return seeOther(reply, '/account?notice=revoked')
  })

  // Changing the login password needs the current one (a session left open on a shared
  // computer must not be enough), is throttled like sign-in, and ends every other session.
  app.post('/account/password', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const { session, form } = ok
    const current = field(form, 'current_password') ?? ''
    const next = field(form, 'new_password') ?? ''
    const again = field(form, 'confirm_password') ?? ''
    const refuse = (status: number, error: string) => renderAccount(reply, status, session, { name: '', callback: '', scopes: ['read_public'] }, undefined, error)
    const keys = { realm: 'web' as const, user: session.user.id, ip: app.publicOrigin(request).ip }
    if (throttle.locked?.(keys) === true) return refuse(403, 'This account is locked by the operator. Ask them to unlock it.')
    const wait = await throttle.check(keys)
    if (wait > 0) {
      void reply.header('retry-after', String(wait))
      return refuse(429, `Too many wrong passwords. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? 's' : ''}.`)
    }
    if (current === '' || next === '') return refuse(400, 'Enter your current password and a new one.')
    if (!(await store.verifyLoginPassword(session.user.id, current))) {
      await throttle.failed(keys)
      return refuse(403, 'Your current password is not right.')
    }
    if (next !== again) return refuse(400, 'The new password and its confirmation differ.')
    const weak = loginPasswordProblem(next, session.user.id)
    if (weak !== null) return refuse(400, `${weak[0]!.toUpperCase()}${weak.slice(1)}.`)
    try {
      await store.setLoginPassword(session.user.id, next)
    } catch (err) {
      if (err instanceof InvalidInput) return refuse(400, `The new ${err.message}.`)
      throw err
    }
    await store.endUserSessions(session.user.id, session.id)
    await audited(request, { kind: 'user', action: 'account.change_password', target: session.user.id, before: null, after: null })
    return seeOther(reply, '/account?notice=password_changed#password')
  })

  // The address kigo mails migration notices and reset links to (docs/gateway.md#the-contact-e-mail):
  // a new one is used once its owner opens the link mailed to it (mail/contact-email.ts);
  // the user may remove it here; the operator sets it through the operator API.
  app.post('/account/email', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const email = (field(ok.form, 'email') ?? '').trim()
    const contact = ctx.contactEmail
    if (contact) {
      const origin = app.publicOrigin(request)
      const change = await changeContactEmail(contact, store, ok.session.user.id, email, `${origin.scheme}://${origin.host}`, ctx.now())
      const again = (message: string) => renderAccount(reply, 400, ok.session, { name: '', callback: '', scopes: ['read_public'] }, message)
      if (change.outcome === 'invalid') return again('That is not an e-mail address such as alice@example.com; nothing was saved.')
      if (change.outcome === 'no_mail') return again('This service sends no mail, so it cannot check a new address. Ask the operator of this service to set it; nothing was saved.')
      if (change.outcome === 'pending') await audited(request, { kind: 'user', action: 'account.request_email', target: ok.session.user.id, before: null, after: { pending: change.email } })
      if (change.outcome === 'removed') await audited(request, { kind: 'user', action: 'account.set_email', target: ok.session.user.id, before: { email: change.before }, after: { email: null } })
      return seeOther(reply, `/account?notice=${change.outcome === 'pending' ? 'email_pending' : change.outcome === 'removed' ? 'email_removed' : 'email'}#contact`)
    }
    const before = await store.getUserEmail(ok.session.user.id)
    try {
      await store.setUserEmail(ok.session.user.id, email === '' ? null : email)
      await audited(request, { kind: 'user', action: 'account.set_email', target: ok.session.user.id, before: { email: before }, after: { email: email === '' ? null : email } })
    } catch (err) {
      if (err instanceof InvalidInput) return renderAccount(reply, 400, ok.session, { name: '', callback: '', scopes: ['read_public'] }, 'That is not an e-mail address such as alice@example.com; nothing was saved.')
      throw err
    }
    return seeOther(reply, '/account?notice=email#contact')
  })

  app.post('/account/api-password', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const asked = confirmFirst(reply, ok.session, ok.form, { action: '/account/api-password', title: 'Reset your API password?', message: 'The current API password stops working at once: every client that signs in with WSSE or HTTP Basic (see “Tools still using your API password”) fails until you give it the new one.', button: 'Reset API password' })
    if (asked) return asked
    await store.setApiPassword(ok.session.user.id, randomToken(apiPasswordBytes))
    await audited(request, { kind: 'user', action: 'account.reset_api_password', target: ok.session.user.id, before: null, after: null })
    return seeOther(reply, '/account?notice=reset#api-password')
  })

  /** The signed-in user's own application named in the path, or the 404 page already sent. */
  const ownApplication = async (request: FastifyRequest, reply: FastifyReply, session: Session & { user: User }) => {
    const key = (request.params as { key: string }).key
    const found = await store.getConsumer(key)
    if (found && found.consumer.ownerId === session.user.id) return found.consumer
    await sendPage(reply, 404, messagePage({ user: session.user, csrfToken: session.csrfToken, title: 'No such application', message: 'You have no application with this key.', link: { href: '/account', text: 'Your account' } }))
    return null
  }

  // The owner rotates the consumer secret (the old one stops working) or deletes the
  // application (with every token it holds), as the operator can (kigo apps rotate|delete).
  app.post('/account/apps/:key/rotate', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const consumer = await ownApplication(request, reply, ok.session)
    if (!consumer) return reply
    const path = `/account/apps/${encodeURIComponent(consumer.key)}/rotate`
    const asked = confirmFirst(reply, ok.session, ok.form, { action: path, title: `New secret for ${consumer.name}?`, message: 'A new consumer secret is made and the current one stops working at once: the application fails until it is given the new secret. Its users stay authorized.', button: 'Make a new secret' })
    if (asked) return asked
    await store.rotateConsumerSecret(consumer.key)
    await audited(request, { kind: 'app', action: 'account.app_rotate_secret', target: consumer.key, before: { user: ok.session.user.id }, after: { user: ok.session.user.id } })
    return seeOther(reply, `/account/apps/${encodeURIComponent(consumer.key)}?notice=rotated`)
  })

  app.post('/account/apps/:key/delete', async (request, reply) => {
    const ok = await signedInPost(request, reply)
    if (!ok) return reply
    const consumer = await ownApplication(request, reply, ok.session)
    if (!consumer) return reply
    const path = `/account/apps/${encodeURIComponent(consumer.key)}/delete`
    const asked = confirmFirst(reply, ok.session, ok.form, { action: path, title: `Delete ${consumer.name}?`, message: 'The application is deleted with every access it holds: no user can use it any more, and its key and secret stop working. This cannot be undone.', button: 'Delete the application' })
    if (asked) return asked
    const deleted = await store.deleteConsumer(consumer.key)
    await audited(request, { kind: 'app', action: 'account.app_delete', target: consumer.key, before: { user: ok.session.user.id, name: consumer.name, scopes: consumer.scopes, tokens: deleted?.tokens ?? 0 }, after: null })
    return seeOther(reply, '/account?notice=app_deleted#applications')
  })
}
