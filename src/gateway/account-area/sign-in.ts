// Signing in and out of the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// throttled per user and per address (docs/operations.md#throttling); signing in gives a
// new session id, signing out ends the session.
import type { FastifyInstance } from 'fastify'
import { userIdPattern } from '../domain/identifiers.js'
import type { AccountKit } from './account-kit.js'
import type { AccountContext } from './context.js'
import { field } from './form.js'
import { html, page, sendPage, seeOther } from './html.js'
import { safeNext } from './next.js'
import { csrfField, loginPage } from './pages.js'

/** The sign-in form's own words when its CSRF token does not match (cookies refused, an old tab). */
const signInExpired = {
  message: 'The sign-in form is out of date, or your browser does not keep cookies. Reload the page and try again.',
  link: { href: '/account/login', text: 'Sign in' },
}

export function registerSignIn(app: FastifyInstance, ctx: AccountContext, kit: AccountKit): void {
  const { store, sessions, throttle } = ctx

  app.get('/account/login', async (request, reply) => {
    request.routeName = 'account'
    const next = safeNext((request.query as Record<string, string>).next) ?? '/account'
    const session = await sessions.currentOrVisitor(request, reply, kit.secure(request))
    if (session.user) return seeOther(reply, next)
    const notice = kit.noticeOf(request)
    return sendPage(reply, 200, loginPage({ csrfToken: session.csrfToken, next, ...(notice ? { notice } : {}) }))
  })

  app.post('/account/login', async (request, reply) => {
    request.routeName = 'account'
    const posted = await kit.posted(request, reply, signInExpired)
    if (!posted) return reply
    const { form, session: visitor } = posted
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
    await sessions.start(request, reply, user, kit.secure(request))
    return seeOther(reply, next)
  })

  // "Sign out" on a page that cannot post the form (the public pages, which never see the
  // session's CSRF token): the same button, asked for once more here. Nobody signed in: the sign-in form.
  app.get('/account/logout', async (request, reply) => {
    request.routeName = 'account'
    const session = await sessions.current(request)
    if (!session?.user) return seeOther(reply, '/account/login')
    const body = html`<h1>Sign out of kigo?</h1>
<form method="post" action="/account/logout">${csrfField(session.csrfToken)}<button type="submit">Sign out</button></form>`
    return sendPage(reply, 200, page({ title: 'Sign out', narrow: true, user: session.user, csrfToken: session.csrfToken, body }))
  })

  app.post('/account/logout', async (request, reply) => {
    request.routeName = 'account'
    const posted = await kit.posted(request, reply)
    if (!posted) return reply
    await sessions.end(posted.session, reply, kit.secure(request))
    return seeOther(reply, '/account/login?notice=signed_out')
  })
}
