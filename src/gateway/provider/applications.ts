// The user's own OAuth applications on the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// registering one, its page (key, endpoints), rotating its secret with the overlap the
// owner chooses (docs/gateway.md#rotating-a-secret), deleting it, and revoking an
// application's access to one's account; each change audited as an `account.*` action
// naming the user. The consumer secret is shown once: on the answer to the registration
// or rotation that made it, never on a later visit. Registered on the account area as the
// login API's and OpenID Connect's pages are, with the account area's posted-form opening.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccountKit } from '../account-area/account-kit.js'
import { field } from '../account-area/form.js'
import { sendPage, sendSecretPage, seeOther } from '../account-area/html.js'
import { applicationPage, messagePage, overlapChoice, type RegisterForm, type ShownSecret } from '../account-area/pages.js'
import { livePrevious, overlapOf, rotationAudit } from '../domain/secret-rotation.js'
import type { Consumer } from '../store/types.js'
import type { SignedInSession } from '../account-area/posted-form.js'
import { scopesFromCheckboxes } from '../domain/scopes.js'
import { InvalidInput } from '../store/validation.js'
import type { ProviderContext } from './context.js'

export function registerApplications(app: FastifyInstance, ctx: ProviderContext, kit: AccountKit): void {
  const { store, sessions } = ctx

  /** The application's page with the secret just made, the one answer that shows it. */
  const showSecret = (request: FastifyRequest, reply: FastifyReply, status: number, session: SignedInSession, consumer: Consumer, shown: ShownSecret, notice: string) =>
    sendSecretPage(reply, status, applicationPage({ user: session.user, csrfToken: session.csrfToken, consumer, baseUrl: request.deployment!.baseUrl, notice, shown }))

  app.post('/account/apps', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const { session, form } = ok
    const input: RegisterForm = {
      name: (field(form, 'name') ?? '').trim(),
      callback: (field(form, 'callback') ?? '').trim(),
      scopes: scopesFromCheckboxes(form.getAll('scope')),
    }
    const invalid = (error: string) => kit.renderAccount(reply, 400, session, { ...input, error })
    if (input.name === '') return invalid('Give the application a name.')
    if (input.scopes.length === 0) return invalid('Choose at least one scope.')
    try {
      const { consumer, secret } = await store.createConsumer({ name: input.name, ownerId: session.user.id, scopes: input.scopes, callbackUrl: input.callback === '' ? null : input.callback })
      await kit.audited(kit.by(request, session.user.id), { kind: 'app', action: 'account.app_create', target: consumer.key, before: null, after: { user: session.user.id, name: consumer.name, scopes: consumer.scopes, callback_url: consumer.callbackUrl } })
      return showSecret(request, reply, 201, session, consumer, { secret }, 'Your application is registered. Keep the consumer secret private.')
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
    const notice = kit.noticeOf(request)
    const previous = livePrevious(found.previous, ctx.now())
    return sendPage(
      reply,
      200,
      applicationPage({ user: session.user, csrfToken: session.csrfToken, consumer: found.consumer, baseUrl: request.deployment!.baseUrl, previousUntil: previous === null ? null : new Date(previous.expiresAt), ...(notice ? { notice } : {}) }),
    )
  })

  app.post('/account/revoke', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const key = field(ok.form, 'consumer_key')
    if (key === null || key === '') return sendPage(reply, 400, messagePage({ title: 'Bad form', message: 'Which application? The form named none.' }))
    const name = (await store.listAuthorizedApplications(ok.session.user.id)).find((a) => a.consumer.key === key)?.consumer.name ?? key
    const asked = kit.confirmFirst(reply, ok.session, ok.form, { action: '/account/revoke', title: `Revoke ${name}?`, message: `${name} will no longer be able to use your account. To let it in again, you would have to authorize it again from the application.`, button: 'Revoke access', fields: { consumer_key: key } })
    if (asked) return asked
    await store.revokeUserTokensForConsumer(ok.session.user.id, key)
    await kit.audited(kit.by(request, ok.session.user.id), { kind: 'token', action: 'account.revoke', target: key, before: { user: ok.session.user.id, application: name }, after: null })
    return seeOther(reply, '/account?notice=revoked')
  })

  // Changing the login password needs the current one (a session left open on a shared

  const noSuchApplication = (reply: FastifyReply, session: SignedInSession) =>
    sendPage(reply, 404, messagePage({ user: session.user, csrfToken: session.csrfToken, title: 'No such application', message: 'You have no application with this key.', link: { href: '/account', text: 'Your account' } }))

  /** The signed-in user's own application named in the path, or the 404 page already sent. */
  const ownApplication = async (request: FastifyRequest, reply: FastifyReply, session: SignedInSession) => {
    const key = (request.params as { key: string }).key
    const found = await store.getConsumer(key)
    if (found && found.consumer.ownerId === session.user.id) return found.consumer
    await noSuchApplication(reply, session)
    return null
  }

  // The owner rotates the consumer secret (the old one keeps working as long as chosen,
  // docs/gateway.md#rotating-a-secret) or deletes the application; each asks first.

  app.post('/account/apps/:key/rotate', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const consumer = await ownApplication(request, reply, ok.session)
    if (!consumer) return reply
    const path = `/account/apps/${encodeURIComponent(consumer.key)}/rotate`
    const cancel = `/account/apps/${encodeURIComponent(consumer.key)}`
    const asked = kit.confirmFirst(reply, ok.session, ok.form, { action: path, title: `New secret for ${consumer.name}?`, message: 'A new consumer secret is made and shown once. The current one keeps working for as long as you choose below, and then stops: the application fails until it is given the new secret. Its users stay authorized.', button: 'Make a new secret', choice: overlapChoice, cancel })
    if (asked) return asked
    // No choice posted (a form of before the choice existed) is no overlap.
    const overlapSeconds = overlapOf(field(ok.form, 'overlap') ?? '0')
    if (overlapSeconds === null) {
      return sendPage(reply, 400, messagePage({ user: ok.session.user, csrfToken: ok.session.csrfToken, title: 'Choose how long the old secret works', message: 'The form named no overlap this page offers: none, 1 hour, 24 hours or 7 days. Nothing was changed.', link: { href: cancel, text: `Back to ${consumer.name}` } }))
    }
    const rotated = await store.rotateConsumerSecret(consumer.key, { overlapSeconds, now: new Date(ctx.now()) })
    if (!rotated) return noSuchApplication(reply, ok.session)
    await kit.audited(kit.by(request, ok.session.user.id), { kind: 'app', action: 'account.app_rotate_secret', target: consumer.key, before: { user: ok.session.user.id }, after: { user: ok.session.user.id, ...rotationAudit(overlapSeconds, rotated.previousUntil) } })
    return showSecret(request, reply, 200, ok.session, rotated.consumer, { secret: rotated.secret, previousUntil: rotated.previousUntil }, 'A new consumer secret was made. Give it to the application.')
  })

  app.post('/account/apps/:key/delete', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const consumer = await ownApplication(request, reply, ok.session)
    if (!consumer) return reply
    const path = `/account/apps/${encodeURIComponent(consumer.key)}/delete`
    const asked = kit.confirmFirst(reply, ok.session, ok.form, { action: path, title: `Delete ${consumer.name}?`, message: 'The application is deleted with every access it holds: no user can use it any more, and its key and secret stop working. This cannot be undone.', button: 'Delete the application' })
    if (asked) return asked
    const deleted = await store.deleteConsumer(consumer.key)
    await kit.audited(kit.by(request, ok.session.user.id), { kind: 'app', action: 'account.app_delete', target: consumer.key, before: { user: ok.session.user.id, name: consumer.name, scopes: consumer.scopes, tokens: deleted?.tokens ?? 0 }, after: null })
    return seeOther(reply, '/account?notice=app_deleted#applications')
  })
}
