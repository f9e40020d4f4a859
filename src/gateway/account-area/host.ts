// The account area's host (docs/gateway.md#the-oauth-provider-and-the-account-pages): one
// `Sessions` for every page built on the area, opened once with the gateway, and mounted
// in each plugin scope that serves account pages (the area's own pages, the guides,
// each feature's). Mounting registers the cookie parser and the deployment check on that
// scope and gives the facade (facade.ts) as the scope sees it.
import fastifyCookie from '@fastify/cookie'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ErrorArea } from '../../common/error-answers.js'
import { errors } from '../../common/errors.js'
import { html } from '../../common/html.js'
import { auditTrail, userActor } from '../audit/audited.js'
import type { AuditStore } from '../audit/store.js'
import type { CredentialRepository, ProviderRepository } from '../store/types.js'
import type { AttemptThrottle } from '../throttle/attempts.js'
import { accountPageRenderer, noticeOf } from './account-kit.js'
import { registerAccount } from './account.js'
import { confirmFirst } from './confirm.js'
import { sendErrorPage } from './error-page.js'
import type { AccountContext } from './context.js'
import type { AccountArea, AccountPages } from './facade.js'
import { sendPage } from './html.js'
import { safeNext } from './next.js'
import { loginPage } from './pages.js'
import { postedForm, signedInPost, type SignedInSession } from './posted-form.js'
import { personProof } from './proof.js'
import { Sessions, sessionBinding } from './session.js'

/** What the area's sessions and its person proof need of the identity store. */
export type AreaStore = ProviderRepository & Pick<CredentialRepository, 'verifyLoginPassword'>

/** The sessions' lifetimes unless configured (docs/gateway.md#the-oauth-provider-and-the-account-pages), seconds. */
export const sessionDefaults = {
  sessionTtlSeconds: 12 * 60 * 60,
  visitorSessionTtlSeconds: 60 * 60,
} as const

export interface AccountHostOptions {
  /** Everything the area's own pages are given, but the sessions (the host opens them). */
  context: Omit<AccountContext, 'sessions'>
  /** Lifetime of a signed-in session, seconds. */
  sessionTtlSeconds: number
  /** Lifetime of a signed-out visitor's session (it protects the login form), seconds. */
  visitorSessionTtlSeconds: number
}

export interface AccountAreaHost {
  /** The one session store of every account page. */
  readonly sessions: Sessions
  /** What the area's own pages are given (with the sessions). */
  readonly context: AccountContext
  /** The area in the plugin scope `app`: registers the cookie parser and the deployment check there. */
  mount(app: FastifyInstance): Promise<AccountPages>
  /** Registers the area's own pages (sign-in, the account page, …) in `app`, mounted there, and gives the area. */
  registerPages(app: FastifyInstance): Promise<AccountPages>
}

/**
 * The area's own pages answer their failures as pages: the identity store away is a 503
 * page (docs/operations.md#dependability); anything else beyond the request a logged 500.
 */
export const pageErrors: ErrorArea = {
  wording: {
    request: (f) => (f.status === 413 ? errors.tooLarge('body_too_large', 'The request body is too large') : undefined),
    unavailable: () => errors.unavailable('store_unavailable', 'The service cannot answer right now; try again shortly'),
    internalMessage: 'Internal error',
  },
  logMessage: 'account page request failed',
  render: (_request, reply, answer) => sendErrorPage(reply, answer),
}

/** The cookie parser and the deployment check on a scope that serves account pages. */
async function prepare(app: FastifyInstance): Promise<void> {
  if (!app.hasRequestDecorator('cookies')) await app.register(fastifyCookie)
  // Only the deployments answer (docs/gateway.md#deployments): a page, a sign-in or a session asked for on
  // another Host is not ours (400 unknown_deployment, in the feature's own format).
  app.addHook('onRequest', app.requireDeployment)
}

/** The facade in scope `app` over `sessions`. */
function facade(app: FastifyInstance, sessions: Sessions, o: { store: AreaStore; throttle: AttemptThrottle; now: () => number; audit?: Pick<AuditStore, 'record'> | undefined }): AccountArea {
  const secure = (request: FastifyRequest) => app.publicOrigin(request).scheme === 'https'
  const by = (request: FastifyRequest, user: string) => userActor(user, app.publicOrigin(request).ip)
  return {
    session: (request) => sessions.current(request),
    async signedInUser(request) {
      return (await sessions.current(request))?.user ?? null
    },
    async requireSignIn(request, reply, { next, context }) {
      const session = await sessions.currentOrVisitor(request, reply, secure(request))
      if (session.user) return session as SignedInSession
      const back = safeNext(next) ?? '/account'
      await sendPage(reply, 200, loginPage({ csrfToken: session.csrfToken, next: back, ...(context ? { context } : {}) }))
      return null
    },
    loginUrl: (next) => `/account/login?next=${encodeURIComponent(safeNext(next) ?? '/account')}`,
    csrfField: (session) => html`<input type="hidden" name="csrf_token" value="${session.csrfToken}">`,
    posted(request, reply, expired) {
      request.routeName = 'account'
      return postedForm(sessions, request, reply, expired)
    },
    signedInPost(request, reply) {
      request.routeName = 'account'
      return signedInPost(sessions, request, reply)
    },
    async ownedPost(request, reply, own) {
      request.routeName = 'account'
      const posted = await signedInPost(sessions, request, reply)
      if (!posted) return null
      const item = await own(request, reply, posted.session)
      return item === null ? null : { posted, item }
    },
    secure,
    noticeOf,
    actor: (request, session) => by(request, session.user.id),
    by,
    audited: auditTrail(o.audit, app.log),
    confirmFirst,
    holdNewSecret: (session, slot, shown) => sessions.holdNewSecret(session, slot, shown),
    takeNewSecret: (session, slot) => sessions.takeNewSecret(session, slot),
    proof: personProof({ store: o.store, throttle: o.throttle, now: o.now, ipOf: (request) => app.publicOrigin(request).ip }),
  }
}

/** Opens the account area once for the gateway: one `Sessions`, mounted by each scope that serves account pages. */
export function openAccountArea(o: AccountHostOptions): AccountAreaHost {
  const ctx = o.context
  const sessions = new Sessions(ctx.store, { ttlSeconds: o.sessionTtlSeconds, visitorTtlSeconds: o.visitorSessionTtlSeconds }, ctx.now, sessionBinding(ctx.config.secretKey))
  const context: AccountContext = { ...ctx, sessions }
  const renderAccount = accountPageRenderer(context)
  const mount = async (app: FastifyInstance): Promise<AccountPages> => {
    await prepare(app)
    return { ...facade(app, sessions, context), renderAccount }
  }
  return {
    sessions,
    context,
    mount,
    async registerPages(app) {
      const area = await mount(app)
      app.answerErrorsAs(pageErrors)
      registerAccount(app, context, area)
      return area
    },
  }
}
