// The account page and the changes a user makes to their own account there
// (docs/gateway.md#the-oauth-provider-and-the-account-pages): the sign-in password (the
// current one needed, throttled like sign-in), the contact e-mail (the current password
// needed too: it decides where reset links go) and the API password
// used by Basic and WSSE clients. What cannot be undone asks first; each change goes to
// the audit trail as an `account.*` action naming the user (docs/operations.md#the-audit-trail).
import type { FastifyInstance } from 'fastify'
import { loginPasswordProblem } from '../../common/password-rule.js'
import { randomToken } from '../../common/secrets.js'
import { InvalidInput } from '../store/validation.js'
import type { AccountKit } from './account-kit.js'
import { changeContactEmail } from './contact-email.js'
import type { AccountContext } from './context.js'
import { field } from './form.js'
import { seeOther } from './html.js'
import type { SignedInSession } from './posted-form.js'

/** Same size as the operator API's generated passwords. */
const apiPasswordBytes = 18

export function registerAccountPage(app: FastifyInstance, ctx: AccountContext, kit: AccountKit): void {
  const { store, sessions } = ctx
  app.get('/account', async (request, reply) => {
    request.routeName = 'account'
    const session = await sessions.current(request)
    if (!session?.user) return seeOther(reply, '/account/login?next=%2Faccount')
    return kit.renderAccount(reply, 200, session as SignedInSession, { notice: kit.noticeOf(request) })
  })

  app.post('/account/password', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const { session, form } = ok
    const current = field(form, 'current_password') ?? ''
    const next = field(form, 'new_password') ?? ''
    const again = field(form, 'confirm_password') ?? ''
    const refuse = (status: number, error: string) => kit.renderAccount(reply, status, session, { passwordError: error })
    if (next === '' && current !== '') return refuse(400, 'Enter your current password and a new one.')
    if (await kit.proof.unproven(request, reply, session, current, refuse, 'Enter your current password and a new one.')) return reply
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
    await kit.audited(kit.by(request, session.user.id), { kind: 'user', action: 'account.change_password', target: session.user.id, before: null, after: null })
    return seeOther(reply, '/account?notice=password_changed#password')
  })

  // The address kigo mails migration notices and reset links to (docs/gateway.md#the-contact-e-mail):
  // a new one is used once its owner opens the link mailed to it (contact-email.ts);
  // the user may remove it here; the operator sets it through the operator API.
  app.post('/account/email', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const email = (field(ok.form, 'email') ?? '').trim()
    const refuse = (status: number, error: string) => kit.renderAccount(reply, status, ok.session, { notice: error })
    // Where reset links go is the account itself: changing the address needs the password.
    const proven = async () => !(await kit.proof.unproven(request, reply, ok.session, field(ok.form, 'current_password') ?? '', refuse, 'Enter your current password to change your contact e-mail; nothing was saved.'))
    const contact = ctx.contactEmail
    if (contact) {
      const change = await changeContactEmail(contact, store, ok.session.user.id, email, request.deployment!.baseUrl, ctx.now(), proven)
      if (change.outcome === 'unproven') return reply
      const again = (message: string) => refuse(400, message)
      if (change.outcome === 'invalid') return again('That is not an e-mail address such as alice@example.com; nothing was saved.')
      if (change.outcome === 'no_mail') return again('This service sends no mail, so it cannot check a new address. Ask the operator of this service to set it; nothing was saved.')
      if (change.outcome === 'busy') return refuse(429, 'Too many confirmation mails were sent for this account or to this address today. Try again tomorrow; nothing was saved.')
      const by = kit.by(request, ok.session.user.id)
      if (change.outcome === 'pending') await kit.audited(by, { kind: 'user', action: 'account.request_email', target: ok.session.user.id, before: null, after: { pending: change.email } })
      if (change.outcome === 'removed') await kit.audited(by, { kind: 'user', action: 'account.set_email', target: ok.session.user.id, before: { email: change.before }, after: { email: null } })
      return seeOther(reply, `/account?notice=${change.outcome === 'pending' ? 'email_pending' : change.outcome === 'removed' ? 'email_removed' : 'email'}#contact`)
    }
    const before = await store.getUserEmail(ok.session.user.id)
    if (email !== (before ?? '') && !(await proven())) return reply
    try {
      await store.setUserEmail(ok.session.user.id, email === '' ? null : email)
      await kit.audited(kit.by(request, ok.session.user.id), { kind: 'user', action: 'account.set_email', target: ok.session.user.id, before: { email: before }, after: { email: email === '' ? null : email } })
    } catch (err) {
      if (err instanceof InvalidInput) return kit.renderAccount(reply, 400, ok.session, { notice: 'That is not an e-mail address such as alice@example.com; nothing was saved.' })
      throw err
    }
    return seeOther(reply, '/account?notice=email#contact')
  })

  app.post('/account/api-password', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const asked = kit.confirmFirst(reply, ok.session, ok.form, { action: '/account/api-password', title: 'Reset your API password?', message: 'The current API password stops working at once: every client that signs in with WSSE or HTTP Basic (see “Tools still using your API password”) fails until you give it the new one.', button: 'Reset API password' })
    if (asked) return asked
    await store.setApiPassword(ok.session.user.id, randomToken(apiPasswordBytes))
    await kit.audited(kit.by(request, ok.session.user.id), { kind: 'user', action: 'account.reset_api_password', target: ok.session.user.id, before: null, after: null })
    return seeOther(reply, '/account?notice=reset#api-password')
  })
}
