// The page a mailed contact-e-mail link opens, and its confirmation
// (docs/gateway.md#the-contact-e-mail): a GET changes nothing; the page's button posts the
// token back through the account area's one form opening, and the change is audited as
// the account's own.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { html, page, sendPage, seeOther } from './html.js'
import { messagePage } from './pages.js'
import { field } from './form.js'
import type { AccountKit } from './account-kit.js'
import type { Sessions } from './session.js'
import { tellOldAddress, type ContactEmail, type Users } from './contact-email.js'

export interface ContactEmailRoutesOptions {
  contactEmail: ContactEmail
  users: Users
  sessions: Sessions
  now: () => number
}

/** GET and POST /account/email/verify: the page a mailed link opens, and its confirmation. */
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
    const session = await o.sessions.currentOrVisitor(request, reply, kit.secureOf(request))
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
      await tellOldAddress(c, used.userId, before, used.email, request.deployment!.baseUrl)
      c.outbox.nudge()
    }
    await kit.audited(kit.by(request, used.userId), { kind: 'user', action: 'account.verify_email', target: used.userId, before: { email: before }, after: { email: used.email } })
    if (session?.user?.id === used.userId) return seeOther(reply, '/account?notice=email_verified#contact')
    return sendPage(reply, 200, messagePage({ title: 'Contact e-mail confirmed', message: `${used.email} is now the contact e-mail of the account ${used.userId}.`, link: { href: '/account', text: 'Your account' } }))
  })
}
