// The user's own OAuth applications on the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// registering one, its page (key, endpoints), editing its name, callback and home page,
// rotating its secret with the overlap the owner chooses (docs/gateway.md#rotating-a-secret),
// deleting it, and revoking an application's access to one's account; each change audited
// as an `account.*` action naming the user. The consumer secret is shown once: the
// registration or rotation answers 303 to the application's new-secret page, which shows
// it the first time it is opened (docs/gateway.md#a-new-secret-is-shown-once), never on a
// reload or a later visit, so a reload never registers or rotates again. Registered
// on the account area as the login API's and OpenID Connect's pages are, with the account
// area's posted-form opening.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccountKit, RegisterForm } from './account-section.js'
import { field } from '../account-area/form.js'
import { sendPage, sendSecretPage, seeOther } from '../account-area/html.js'
import { messagePage, shownOnceNotice, type ShownSecret } from '../account-area/pages.js'
import { applicationPage } from './application-page.js'
import { applicationEditPage } from './application-edit.js'
import { livePrevious, type PreviousSecret } from '../domain/secret-rotation.js'
import { accountPaths, auditAction, registerAccountRotation } from '../registrations/lifecycle.js'
import { applicationKind } from './kind.js'
import type { SignedInSession } from '../account-area/posted-form.js'
import { scopesFromCheckboxes } from '../domain/scopes.js'
import { InvalidInput, refused } from '../store/validation.js'
import type { Consumer, ConsumerDetails } from '../store/types.js'
import type { AccountStore } from '../account-area/context.js'

/** What the application pages use of the provider: the store, the account sessions and the clock. */
export interface ApplicationPagesContext {
  store: AccountStore
  now: () => number
  /** The migration policy: the oauth1 policy may close the registration of new applications. */
  migration?: { policy: { registrationClosed(method: 'oauth1'): boolean } }
}

const noName = 'Give the application a name.'

const paths = accountPaths(applicationKind)

/** The name, callback and home page fields as posted, trimmed: a registration's and an edit's. */
const detailsOf = (form: URLSearchParams) => ({
  name: (field(form, 'name') ?? '').trim(),
  callback: (field(form, 'callback') ?? '').trim(),
  home: (field(form, 'home_url') ?? '').trim(),
})

/** The details as the store takes them (an empty field: none). */
const storedDetails = (d: ReturnType<typeof detailsOf>): ConsumerDetails => ({ name: d.name, callbackUrl: d.callback === '' ? null : d.callback, homeUrl: d.home === '' ? null : d.home })

/** What the form says about details the store refused (it checks a registration and an edit alike). */
const refusal = (err: InvalidInput): string => (err.field === 'callbackUrl' ? `The callback ${err.message.replace(/^callback URL /, 'URL ')}.` : `The ${err.message}.`)

/** The application as the audit trail records it, before and after a change. */
const auditView = (c: Consumer) => ({ name: c.name, callback_url: c.callbackUrl, home_url: c.homeUrl })

export function registerApplications(app: FastifyInstance, ctx: ApplicationPagesContext, kit: AccountKit): void {
  const { store } = ctx

  /** Where a registration or rotation sends the browser: the page that shows the new secret once. */
  const newSecretPath = paths.newSecret
  const slotOf = paths.slot

  app.post('/account/apps', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const { session, form } = ok
    const input: RegisterForm = { ...detailsOf(form), scopes: scopesFromCheckboxes(form.getAll('scope')) }
    const invalid = (error: string) => kit.renderAccount(reply, 400, session, { ...input, error })
    // Closed by the oauth1 policy: the account page says why in place of the form (account-kit.ts).
    if (ctx.migration?.policy.registrationClosed('oauth1') === true) return kit.renderAccount(reply, 403, session, input)
    if (input.name === '') return invalid(noName)
    if (input.scopes.length === 0) return invalid('Choose at least one scope.')
    try {
      const { consumer, secret } = await store.createConsumer({ ...storedDetails(input), ownerId: session.user.id, scopes: input.scopes })
      await kit.audited(kit.by(request, session.user.id), { kind: 'app', action: auditAction(applicationKind, 'create'), target: consumer.key, before: null, after: { user: session.user.id, ...auditView(consumer), scopes: consumer.scopes } })
      await kit.holdNewSecret(session, slotOf(consumer.key), { secret })
      return seeOther(reply, newSecretPath(consumer.key))
    } catch (err) {
      if (err instanceof InvalidInput) return invalid(refusal(err))
      throw err
    }
  })

  /** The application's page, with the secret a registration or rotation just made when `shown` has it. */
  const sendApplication = (request: FastifyRequest, reply: FastifyReply, session: SignedInSession, consumer: Consumer, previous: PreviousSecret | undefined, o: { shown?: ShownSecret; notice?: string }) => {
    const live = livePrevious(previous, ctx.now())
    return sendSecretPage(reply, 200, applicationPage({ user: session.user, csrfToken: session.csrfToken, consumer, baseUrl: request.deployment!.baseUrl, askPassword: !kit.proof.recent(session), previousUntil: live === null ? null : new Date(live.expiresAt), ...o }))
  }

  /** The signed-in user's own application and its previous secret, or null after answering (the sign-in, or 404). */
  const ownForPage = async (request: FastifyRequest, reply: FastifyReply, path: (key: string) => string) => {
    request.routeName = 'account'
    const session = await kit.session(request)
    const key = (request.params as { key: string }).key
    if (!session?.user) {
      await seeOther(reply, `/account/login?next=${encodeURIComponent(path(key))}`)
      return null
    }
    const found = await store.getConsumer(key)
    if (!found || found.consumer.ownerId !== session.user.id) {
      await noSuchApplication(reply, session as SignedInSession)
      return null
    }
    return { session: session as SignedInSession, ...found }
  }

  // The address a registration answered at before it redirected: the list of applications.
  app.get('/account/apps', async (request, reply) => {
    request.routeName = 'account'
    return seeOther(reply, '/account#applications')
  })

  app.get('/account/apps/:key', async (request, reply) => {
    const own = await ownForPage(request, reply, () => '/account')
    if (!own) return reply
    const notice = kit.noticeOf(request)
    return sendApplication(request, reply, own.session, own.consumer, own.previous, notice ? { notice } : {})
  })

  // The page a registration or rotation redirects to: the new secret, the first time it is
  // opened by the session that made it; opened again, it says the secret was shown once.
  app.get('/account/apps/:key/new-secret', async (request, reply) => {
    const own = await ownForPage(request, reply, newSecretPath)
    if (!own) return reply
    const shown = await kit.takeNewSecret(own.session, slotOf(own.consumer.key))
    if (shown === null) return sendApplication(request, reply, own.session, own.consumer, own.previous, { notice: shownOnceNotice('consumer secret', 'Make a new secret below.') })
    const notice = shown.previousUntil === undefined ? 'Your application is registered. Keep the consumer secret private.' : 'A new consumer secret was made. Give it to the application.'
    return sendApplication(request, reply, own.session, own.consumer, own.previous, { shown, notice })
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

  // The owner edits the name, callback and home page: checked as a registration is, and
  // refused whole (the form again, as typed, with why) when one is wrong. The initiate and
  // consent steps read the application from the store on every request, so every gateway
  // uses the change at once (the verifiers' credential cache uses none of these fields).
  app.post('/account/apps/:key/edit', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const consumer = await ownApplication(request, reply, ok.session)
    if (!consumer) return reply
    const input = detailsOf(ok.form)
    const refuse = (status: number, error: string) => sendPage(reply, status, applicationEditPage({ user: ok.session.user, csrfToken: ok.session.csrfToken, consumer, askPassword: !kit.proof.recent(ok.session), form: { ...input, error: `${error} Nothing was changed.` } }))
    const invalid = (error: string) => refuse(400, error)
    if (input.name === '') return invalid(noName)
    // A new callback is where people's sign-ins go: it needs proof of the owner, not only of the session.
    if (storedDetails(input).callbackUrl !== consumer.callbackUrl && (await kit.proof.unproven(request, reply, ok.session, field(ok.form, 'current_password') ?? '', refuse, 'Enter your current password to change the callback URL.', { orRecentSignIn: true }))) return reply
    const edited = await store.updateConsumer(consumer.key, storedDetails(input)).catch(refused)
    if (edited instanceof InvalidInput) return invalid(refusal(edited))
    if (!edited) {
      await ownApplication(request, reply, ok.session) // deleted meanwhile: its 404
      return reply
    }
    await kit.audited(kit.by(request, ok.session.user.id), { kind: 'app', action: auditAction(applicationKind, 'edit'), target: consumer.key, before: auditView(edited.before), after: auditView(edited.after) })
    return seeOther(reply, `/account/apps/${encodeURIComponent(consumer.key)}?notice=app_edited`)
  })

  // The owner rotates the consumer secret (the old one keeps working as long as chosen,
  // docs/gateway.md#rotating-a-secret) or deletes the application; each asks first.

  registerAccountRotation(app, {
    kind: applicationKind,
    param: 'key',
    async owned(request, reply) {
      const ok = await kit.signedInPost(request, reply)
      const item = ok && (await ownApplication(request, reply, ok.session))
      return ok && item ? { ...ok, item } : null
    },
    idOf: (consumer) => consumer.key,
    words: (consumer) => ({ title: `New secret for ${consumer.name}?`, message: 'A new consumer secret is made and shown once. The current one keeps working for as long as you choose below, and then stops: the application fails until it is given the new secret. Its users stay authorized.', button: 'Make a new secret', cancel: paths.item(consumer.key) }),
    confirmFirst: kit.confirmFirst,
    actor: (request, session) => kit.by(request, session.user.id),
    audited: kit.audited,
    auditUser: true,
    hold: (session, slot, shown) => kit.holdNewSecret(session, slot, shown),
    rotate: async (consumer, overlapSeconds) => (await store.rotateConsumerSecret(consumer.key, { overlapSeconds, now: new Date(ctx.now()) })) ?? 'not_found',
    refuse: (reply, session, consumer, why) => why === 'overlap'
      ? sendPage(reply, 400, messagePage({ user: session.user, csrfToken: session.csrfToken, title: 'Choose how long the old secret works', message: 'The form named no overlap this page offers: none, 1 hour, 24 hours or 7 days. Nothing was changed.', link: { href: paths.item(consumer.key), text: `Back to ${consumer.name}` } }))
      : noSuchApplication(reply, session),
  })

  app.post('/account/apps/:key/delete', async (request, reply) => {
    const ok = await kit.signedInPost(request, reply)
    if (!ok) return reply
    const consumer = await ownApplication(request, reply, ok.session)
    if (!consumer) return reply
    const path = paths.delete(consumer.key)
    const asked = kit.confirmFirst(reply, ok.session, ok.form, { action: path, title: `Delete ${consumer.name}?`, message: 'The application is deleted with every access it holds: no user can use it any more, and its key and secret stop working. This cannot be undone.', button: 'Delete the application' })
    if (asked) return asked
    const deleted = await store.deleteConsumer(consumer.key)
    await kit.audited(kit.by(request, ok.session.user.id), { kind: 'app', action: auditAction(applicationKind, 'delete'), target: consumer.key, before: { user: ok.session.user.id, name: consumer.name, scopes: consumer.scopes, tokens: deleted?.tokens ?? 0 }, after: null })
    return seeOther(reply, '/account?notice=app_deleted#applications')
  })
}
