// The user's own OAuth applications on the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// registering one, its page (key, endpoints), editing its name, callback and home page,
// rotating its secret with the overlap the owner chooses (docs/gateway.md#rotating-a-secret),
// deleting it, and revoking an application's access to one's account. The registration's
// lifecycle is the one every registered client shares (registrations/account-pages.ts:
// the secret shown once on the page the post redirects to, owner checks, audit actions
// `app.*`); this module gives it the applications' forms, store calls and pages. Their
// list and registration form are on the account page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AccountKit, RegisterForm } from './account-section.js'
import { field } from '../account-area/form.js'
import { sendPage, sendSecretPage, seeOther } from '../account-area/html.js'
import { messagePage, shownOnceNotice, type ShownSecret } from '../account-area/pages.js'
import { applicationPage } from './application-page.js'
import { applicationEditPage } from './application-edit.js'
import { livePrevious, type PreviousSecret } from '../domain/secret-rotation.js'
import { accountPaths } from '../registrations/lifecycle.js'
import { FormRefusal, registerRegistrationPages } from '../registrations/account-pages.js'
import { applicationKind } from './kind.js'
import type { SignedInSession } from '../account-area/posted-form.js'
import { scopesFromCheckboxes } from '../domain/scopes.js'
import type { InvalidInput } from '../store/validation.js'
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

/** An application with the secret its last rotation replaced, if that one still exists. */
type OwnApplication = Consumer & { previous?: PreviousSecret }

export function registerApplications(app: FastifyInstance, ctx: ApplicationPagesContext, kit: AccountKit): void {
  const { store } = ctx

  const noSuchApplication = (reply: FastifyReply, session: SignedInSession) =>
    sendPage(reply, 404, messagePage({ user: session.user, csrfToken: session.csrfToken, title: 'No such application', message: 'You have no application with this key.', link: { href: '/account', text: 'Your account' } }))

  /** The application's page, with the secret a registration or rotation just made when `shown` has it. */
  const sendApplication = (request: FastifyRequest, reply: FastifyReply, session: SignedInSession, consumer: OwnApplication, o: { shown?: ShownSecret; notice?: string }) => {
    const live = livePrevious(consumer.previous, ctx.now())
    return sendSecretPage(reply, 200, applicationPage({ user: session.user, csrfToken: session.csrfToken, consumer, baseUrl: request.deployment!.baseUrl, askPassword: !kit.proof.recent(session), previousUntil: live === null ? null : new Date(live.expiresAt), ...o }))
  }

  // The list of applications is the account page's (its section `applications`).
  const { ownedPage } = registerRegistrationPages(app, kit, {
    kind: applicationKind,
    audited: kit.audited,
    async find(key): Promise<OwnApplication | null> {
      const found = await store.getConsumer(key)
      return found && { ...found.consumer, ...(found.previous ? { previous: found.previous } : {}) }
    },
    idOf: (consumer) => consumer.key,
    notOwned: noSuchApplication,
    // A page asked for signed out sends the browser to the account's sign-in.
    async signIn(request, reply, next) {
      const session = await kit.session(request)
      if (session?.user) return session as SignedInSession
      await seeOther(reply, `/account/login?next=${encodeURIComponent(next)}`)
      return null
    },
    register: {
      read: (form): RegisterForm => ({ ...detailsOf(form), scopes: scopesFromCheckboxes(form.getAll('scope')) }),
      // Closed by the oauth1 policy: the account page says why in place of the form (account-section.ts).
      closed: () => ctx.migration?.policy.registrationClosed('oauth1') === true,
      check: (input) =>
        input.name === '' ? new FormRefusal(noName)
          : input.scopes.length === 0 ? new FormRefusal('Choose at least one scope.')
            : { ...storedDetails(input), scopes: input.scopes },
      create: async (details, session) => {
        const { consumer, secret } = await store.createConsumer({ ...details, ownerId: session.user.id })
        return { item: consumer, secret }
      },
      refusal,
      refuse: (reply, session, input, status, error) => kit.renderAccount(reply, status, session, error === undefined ? input : { ...input, error }),
      auditView: (consumer, session) => ({ user: session.user.id, ...auditView(consumer), scopes: consumer.scopes }),
    },
    // The name, callback and home page. The initiate and consent steps read the application
    // from the store on every request (the verifiers' credential cache uses none of these fields).
    edit: {
      read: detailsOf,
      check: (input) => (input.name === '' ? new FormRefusal(noName) : storedDetails(input)),
      proofAsked: (details, consumer) => (details.callbackUrl !== consumer.callbackUrl ? 'Enter your current password to change the callback URL.' : null),
      update: (consumer, details) => store.updateConsumer(consumer.key, details),
      refusal,
      refuse: (reply, session, consumer, input, status, error) => sendPage(reply, status, applicationEditPage({ user: session.user, csrfToken: session.csrfToken, consumer, askPassword: !kit.proof.recent(session), form: { ...input, error } })),
      auditView,
      done: (consumer) => `${paths.item(consumer.key)}?notice=app_edited`,
    },
    // The old secret keeps working as long as chosen (docs/gateway.md#rotating-a-secret).
    rotation: {
      words: (consumer) => ({ title: `New secret for ${consumer.name}?`, message: 'A new consumer secret is made and shown once. The current one keeps working for as long as you choose below, and then stops: the application fails until it is given the new secret. Its users stay authorized.', button: 'Make a new secret', cancel: paths.item(consumer.key) }),
      auditUser: true,
      rotate: async (consumer, overlapSeconds) => (await store.rotateConsumerSecret(consumer.key, { overlapSeconds, now: new Date(ctx.now()) })) ?? 'not_found',
      refuse: (reply, session, consumer, why) => why === 'overlap'
        ? sendPage(reply, 400, messagePage({ user: session.user, csrfToken: session.csrfToken, title: 'Choose how long the old secret works', message: 'The form named no overlap this page offers: none, 1 hour, 24 hours or 7 days. Nothing was changed.', link: { href: paths.item(consumer.key), text: `Back to ${consumer.name}` } }))
        : noSuchApplication(reply, session),
    },
    deletion: {
      words: (consumer) => ({ title: `Delete ${consumer.name}?`, message: 'The application is deleted with every access it holds: no user can use it any more, and its key and secret stop working. This cannot be undone.', button: 'Delete the application' }),
      async remove(consumer) {
        const deleted = await store.deleteConsumer(consumer.key)
        return { user: consumer.ownerId, name: consumer.name, scopes: consumer.scopes, tokens: deleted?.tokens ?? 0 }
      },
      done: '/account?notice=app_deleted#applications',
    },
    showSecret: (request, reply, session, consumer, shown) =>
      shown === null
        ? sendApplication(request, reply, session, consumer, { notice: shownOnceNotice('consumer secret', 'Make a new secret below.') })
        : sendApplication(request, reply, session, consumer, { shown, notice: shown.previousUntil === undefined ? 'Your application is registered. Keep the consumer secret private.' : 'A new consumer secret was made. Give it to the application.' }),
  })

  // The address a registration answered at before it redirected: the list of applications.
  app.get('/account/apps', async (request, reply) => {
    request.routeName = 'account'
    return seeOther(reply, '/account#applications')
  })

  app.get('/account/apps/:key', async (request, reply) => {
    const own = await ownedPage(request, reply, '/account')
    if (!own) return reply
    const notice = kit.noticeOf(request)
    return sendApplication(request, reply, own.session, own.item, notice ? { notice } : {})
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
}
