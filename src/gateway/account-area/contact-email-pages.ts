// The pages a mailed contact-e-mail link opens, and what their buttons do
// (docs/gateway.md#the-contact-e-mail): the confirmation of a new address, and the undoing
// of a change (the link mailed to the old address). A GET changes nothing; the page's
// button posts the token back through the account area's one form opening, and the change
// is audited as the account's own.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { html, page, sendPage, seeOther } from './html.js'
import { messagePage } from './pages.js'
import { field } from './form.js'
import type { AccountKit } from './account-kit.js'
import type { Sessions } from './session.js'
import { tellOldAddress, type ContactEmail, type Users } from './contact-email.js'
import type { AccountStore } from './context.js'

export interface ContactEmailRoutesOptions {
  contactEmail: ContactEmail
  users: Users & Pick<AccountStore, 'endUserSessions'>
  sessions: Sessions
  now: () => number
}

/** GET and POST /account/email/verify and /account/email/undo: the pages mailed links open, and their buttons. */
export function registerContactEmailRoutes(app: FastifyInstance, o: ContactEmailRoutesOptions, kit: AccountKit): void {
  const { contactEmail: c } = o
    const badLink = (reply: FastifyReply) =>
    sendPage(reply, 400, messagePage({ title: 'This link does not work', message: 'It was used already, it expired, or it is not whole. Enter the address again on your account page to get a new one.', link: { href: '/account#contact', text: 'Your account' } }))
  const tokenOf = (value: unknown) => (typeof value === 'string' && value.length > 0 && value.length <= 200 ? value : null)

  app.get('/account/email/verify', async (request, reply) => {
    request.routeName = 'account'
    const token = tokenOf((request.query as Record<string, unknown>).token)
    const found = token === null ? null : await c.store.peek(token, o.now())
    if (token === null || found === null) return badLink(reply)
    const session = await o.sessions.currentOrVisitor(request, reply, kit.secure(request))
    return sendPage(
      reply,
      200,
      page({
        title: 'Confirm your contact e-mail',
        narrow: true,
        body: html`<div class="card" id="verify-email">
<h1>Confirm your contact e-mail</h1>
<p>Use <strong>${found.email}</strong> as the contact e-mail of the account <strong>${found.userId}</strong>? Migration notices and password-reset links for the account go to this address.</p>
<form method="post" action="/account/email/verify">
<input type="hidden" name="csrf_token" value="${session.csrfToken}">
<input type="hidden" name="token" value="${token}">
<div class="actions"><button type="submit">Use this address</button></div>
</form>
</div>`,
      }),
    )
  })

  app.post('/account/email/verify', async (request, reply) => {
    const read = await kit.posted(request, reply, { message: 'This form is out of date or did not come from kigo. Open the link in the mail again.', link: { href: '/account#contact', text: 'Your account' } })
    if (!read) return reply
    const session = read.session
    const token = tokenOf(field(read.form, 'token'))
    const used = token === null ? null : await c.store.consume(token, o.now())
    if (used === null) return badLink(reply)
    const before = await o.users.getUserEmail(used.userId)
    await o.users.setUserEmail(used.userId, used.email)
    if (before !== null && before !== used.email) {
      await tellOldAddress(c, used.userId, before, used.email, request.deployment!.baseUrl, o.now())
      c.outbox.nudge()
    }
    await kit.audited(kit.by(request, used.userId), { kind: 'user', action: 'account.verify_email', target: used.userId, before: { email: before }, after: { email: used.email } })
    if (session?.user?.id === used.userId) return seeOther(reply, '/account?notice=email_verified#contact')
    return sendPage(reply, 200, messagePage({ title: 'Contact e-mail confirmed', message: `${used.email} is now the contact e-mail of the account ${used.userId}.`, link: { href: '/account', text: 'Your account' } }))
  })

  const badUndo = (reply: FastifyReply) =>
    sendPage(reply, 400, messagePage({ title: 'This link does not work', message: 'It was used already, it expired, or it is not whole. Ask the operator of this service to set your contact e-mail.' }))

  app.get('/account/email/undo', async (request, reply) => {
    request.routeName = 'account'
    const token = tokenOf((request.query as Record<string, unknown>).token)
    const found = token === null ? null : await c.undo.peek(token, o.now())
    if (token === null || found === null) return badUndo(reply)
    const session = await o.sessions.currentOrVisitor(request, reply, kit.secure(request))
    return sendPage(
      reply,
      200,
      page({
        title: 'Undo the change of contact e-mail',
        narrow: true,
        body: html`<div class="card" id="undo-email">
<h1>Undo the change of contact e-mail</h1>
<p>Put <strong>${found.oldEmail}</strong> back as the contact e-mail of the account <strong>${found.userId}</strong>? Everyone signed in to the account is signed out, and a change waiting for confirmation is dropped. Then ask for a new password: the link comes to this address.</p>
<form method="post" action="/account/email/undo">
<input type="hidden" name="csrf_token" value="${session.csrfToken}">
<input type="hidden" name="token" value="${token}">
<div class="actions"><button type="submit">Put my address back</button></div>
</form>
</div>`,
      }),
    )
  })

  app.post('/account/email/undo', async (request, reply) => {
    const read = await kit.posted(request, reply, { message: 'This form is out of date or did not come from kigo. Open the link in the mail again.', link: { href: '/account/forgot', text: 'Forgot your password?' } })
    if (!read) return reply
    const token = tokenOf(field(read.form, 'token'))
    const used = token === null ? null : await c.undo.consume(token, o.now())
    if (used === null) return badUndo(reply)
    const before = await o.users.getUserEmail(used.userId)
    await c.store.cancel(used.userId)
    await o.users.setUserEmail(used.userId, used.oldEmail)
    await o.users.endUserSessions(used.userId)
    await kit.audited(kit.by(request, used.userId), { kind: 'user', action: 'account.undo_email', target: used.userId, before: { email: before }, after: { email: used.oldEmail } })
    return sendPage(reply, 200, messagePage({ title: 'Your contact e-mail is back', message: `${used.oldEmail} is the contact e-mail of the account ${used.userId} again, and everyone signed in to it was signed out. If you did not change the address yourself, ask for a new password now: the link comes to this address.`, link: { href: '/account/forgot', text: 'Set a new password' } }))
  })
}
