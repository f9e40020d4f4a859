// The authorization step (RFC 5849 §2.2, docs/gateway.md#the-oauth-provider-and-the-account-pages): `GET /oauth/authorize?oauth_token=…`
// shows the login form, then the consent page; its Allow / Deny post records the
// decision and sends the user back to the client's callback (or shows the verifier for
// `oob`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { callbackOrigins, callbackWith, outOfBand } from './callback.js'
import type { ProviderContext } from './provider-context.js'
import { field } from '../account-area/form.js'
import { sendPage, seeOther } from '../account-area/html.js'
import { messagePage } from '../account-area/pages.js'
import { consentPage, deniedPage, verifierPage } from './authorize-pages.js'
import type { Consumer, RequestToken } from '../store/types.js'

export function registerAuthorize(app: FastifyInstance, ctx: ProviderContext): void {
  const { store, area } = ctx

  /** The pending, unexpired request token, its application and the application's name, or the page explaining why not. */
  const pendingToken = async (token: string | null): Promise<{ rt: RequestToken; appName: string; consumer: Consumer | null } | { problem: string; title: string }> => {
    if (token === null || token === '') return { title: 'Missing request token', problem: 'This link has no oauth_token. Go back to the application and start again.' }
    const found = await store.getRequestToken(token)
    if (!found) return { title: 'Unknown request', problem: 'This authorization request is not known. Go back to the application and start again.' }
    const rt = found.requestToken
    if (rt.state !== 'pending') return { title: 'Request already answered', problem: 'This authorization request was already answered. Go back to the application and start again.' }
    if (rt.expiresAt.getTime() <= ctx.now()) return { title: 'Request expired', problem: 'This authorization request has expired. Go back to the application and start again.' }
    const consumer = await store.getConsumer(rt.consumerKey)
    return { rt, appName: consumer?.consumer.name ?? 'An application', consumer: consumer?.consumer ?? null }
  }

  const show = async (request: FastifyRequest, reply: FastifyReply) => {
    request.routeName = 'oauth/authorize'
    const query = request.query as Record<string, string | string[] | undefined>
    const token = typeof query.oauth_token === 'string' ? query.oauth_token : null
    const found = await pendingToken(token)
    if ('problem' in found) return sendPage(reply, 400, messagePage({ title: found.title, message: found.problem }))
    const session = await area.requireSignIn(request, reply, { next: request.url, context: `Sign in to decide whether ${found.appName} may use your account.` })
    if (!session) return reply
    const cb = found.rt.callback
    // Who registered the application and how many people use it, for the person deciding.
    const registered = found.consumer
    const registrant = registered && { owner: registered.ownerId, users: await store.countApplicationUsers(registered.key), homeUrl: registered.homeUrl }
    return sendPage(
      reply,
      200,
      consentPage({
        user: session.user,
        csrfToken: session.csrfToken,
        appName: found.appName,
        scopes: found.rt.scopes,
        token: found.rt.token,
        redirectsTo: cb === outOfBand ? null : new URL(cb).host,
        ...(registrant ? { registrant } : {}),
      }),
      callbackOrigins(cb),
    )
  }

  const decide = async (request: FastifyRequest, reply: FastifyReply) => {
    const posted = await area.signedInPost(request, reply)
    // The area names its posts `account`; this one is the authorize step's.
    request.routeName = 'oauth/authorize'
    if (!posted) return reply
    const { session, form } = posted
    const user = session.user
    const viewer = { user, csrfToken: session.csrfToken }
    const decision = field(form, 'decision')
    if (decision !== 'allow' && decision !== 'deny') {
      return sendPage(reply, 400, messagePage({ ...viewer, title: 'No decision', message: 'Choose Allow or Deny.' }))
    }
    const found = await pendingToken(field(form, 'oauth_token'))
    if ('problem' in found) return sendPage(reply, 400, messagePage({ ...viewer, title: found.title, message: found.problem }))
    const { rt, appName } = found
    const now = new Date(ctx.now())

    if (decision === 'deny') {
      if (!(await store.denyRequestToken(rt.token, user.id, now))) {
        return sendPage(reply, 400, messagePage({ ...viewer, title: 'Request already answered', message: 'This authorization request was already answered or has expired.' }))
      }
      if (rt.callback === outOfBand) return sendPage(reply, 200, deniedPage({ ...viewer, appName }))
      return seeOther(reply, callbackWith(rt.callback, { denied: rt.token }))
    }

    const approval = await store.approveRequestToken(rt.token, user.id, now)
    if (!approval) {
      return sendPage(reply, 400, messagePage({ ...viewer, title: 'Request already answered', message: 'This authorization request was already answered or has expired.' }))
    }
    if (rt.callback === outOfBand) return sendPage(reply, 200, verifierPage({ ...viewer, appName, verifier: approval.verifier }))
    return seeOther(reply, callbackWith(rt.callback, { oauth_token: rt.token, oauth_verifier: approval.verifier }))
  }

  app.get('/oauth/authorize', show)
  app.post('/oauth/authorize', decide)
}
