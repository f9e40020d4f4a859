// The account page that turns OAuth 2.0 on for one's own OAuth 1.0a application
// (docs/oauth2.md#for-an-oauth-10a-application), at /account/apps/{key}/oauth2, linked from
// the application's page. The form (signed-in owner, CSRF-checked by the account area) asks
// for the redirect URI (the callback, filled in) and the client's type; the post makes the
// client and answers 303 to the OpenID Connect client's new-secret page, which shows its
// client_id and client secret once (docs/gateway.md#a-new-secret-is-shown-once), as every
// registration does (registrations/account-pages.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { html } from '../../common/html.js'
import { field, page, sendPage, type AccountArea, type SignedInSession } from '../account-area/index.js'
import { providerClientKind } from '../host/authorization.js'
import { showSecretOnce } from '../registrations/account-pages.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { InvalidInput } from '../store/validation.js'
import type { Consumer } from '../store/types.js'
import { OAuth2Refused, type OAuth2Applications } from './applications.js'

export interface TurnOnPagesOptions {
  area: AccountArea
  applications: Pick<OAuth2Applications, 'turnOn' | 'clientOf'>
  consumers: { getConsumer(key: string): Promise<{ consumer: Consumer } | null> }
  audit?: Pick<AuditStore, 'record'>
}

const path = (key: string) => `/account/apps/${encodeURIComponent(key)}/oauth2`

function turnOnPage(o: { session: SignedInSession; csrf: ReturnType<AccountArea['csrfField']>; consumer: Consumer; clientId: string | null; redirectUri: string; type: string; error?: string }): string {
  const c = o.consumer
  return page({
    title: `OAuth 2.0 for ${c.name}`,
    user: o.session.user,
    csrfToken: o.session.csrfToken,
    body: html`<p><a href="/account/apps/${c.key}">← ${c.name}</a></p>
<div class="card">
<h1>OAuth 2.0 for ${c.name}</h1>
${o.clientId !== null
      ? html`<div class="notice" role="status">OAuth 2.0 is on for this application: its client is <code>${o.clientId}</code>. See it among <a href="${providerClientKind.accountBase}">your OpenID Connect clients</a>.</div>`
      : html`${o.error ? html`<div class="error" role="alert">${o.error}</div>` : ''}
<p>The application gets an OAuth 2.0 client of the same name, for the same scopes (${c.scopes.join(', ')}). Its users keep their access: the application exchanges each stored OAuth 1.0a token at the token endpoint for OAuth 2.0 tokens, without asking them again. The OAuth 1.0a tokens keep working meanwhile.</p>
<form method="post" action="${path(c.key)}">${o.csrf}
<label for="redirect_uri">Redirect URI</label>
<input id="redirect_uri" name="redirect_uri" type="url" required value="${o.redirectUri}">
<fieldset><legend>Client type</legend>
<label><input type="radio" name="type" value="confidential"${o.type !== 'public' ? html` checked` : ''}> Confidential: it keeps a client secret (a web application). Only a confidential client can exchange OAuth 1.0a tokens.</label>
<label><input type="radio" name="type" value="public"${o.type === 'public' ? html` checked` : ''}> Public: no secret (an app on a device), PKCE alone; its users authorize it again.</label>
</fieldset>
<div class="actions"><button type="submit">Turn on OAuth 2.0</button></div>
</form>`}
</div>`,
  })
}

export function registerTurnOnPages(app: FastifyInstance, o: TurnOnPagesOptions): void {
  const { area, applications } = o
  const audited = auditTrail(o.audit, app.log)

  /** The signed-in user's own application, or null after answering 404. */
  const own = async (request: FastifyRequest, reply: FastifyReply, session: SignedInSession): Promise<Consumer | null> => {
    const key = (request.params as { key: string }).key
    const found = await o.consumers.getConsumer(key)
    if (!found || found.consumer.ownerId !== session.user.id) {
      await sendPage(reply, 404, page({ title: 'No such application', user: session.user, csrfToken: session.csrfToken, body: html`<div class="card"><h1>No such application</h1><p>You have no application with this key. <a href="/account">Your account</a></p></div>` }))
      return null
    }
    return found.consumer
  }
  const callbackOf = (c: Consumer) => (c.callbackUrl !== null && c.callbackUrl !== 'oob' ? c.callbackUrl : '')

  app.get('/account/apps/:key/oauth2', async (request, reply) => {
    request.routeName = 'account'
    const key = (request.params as { key: string }).key
    const session = await area.requireSignIn(request, reply, { next: /^[A-Za-z0-9_-]{1,256}$/.test(key) ? path(key) : '/account' })
    if (!session) return reply
    const consumer = await own(request, reply, session)
    if (!consumer) return reply
    return sendPage(reply, 200, turnOnPage({ session, csrf: area.csrfField(session), consumer, clientId: await applications.clientOf(consumer.key), redirectUri: callbackOf(consumer), type: 'confidential' }))
  })

  app.post('/account/apps/:key/oauth2', async (request, reply) => {
    request.routeName = 'account'
    const posted = await area.signedInPost(request, reply)
    if (!posted) return reply
    const { session, form } = posted
    const consumer = await own(request, reply, session)
    if (!consumer) return reply
    const redirectUri = (field(form, 'redirect_uri') ?? '').trim()
    const type = field(form, 'type') ?? ''
    const refuse = (status: number, error: string) => sendPage(reply, status, turnOnPage({ session, csrf: area.csrfField(session), consumer, clientId: null, redirectUri, type, error: `${error} Nothing was changed.` }))
    if (type !== 'confidential' && type !== 'public') return refuse(400, 'Choose whether the client is confidential (it keeps a secret) or public.')
    if (redirectUri === '') return refuse(400, 'Give the redirect URI the OAuth 2.0 client will use.')
    let on: Awaited<ReturnType<OAuth2Applications['turnOn']>>
    try {
      on = await applications.turnOn(consumer.key, { redirectUri, public: type === 'public' })
    } catch (err) {
      if (err instanceof InvalidInput) return refuse(400, `The redirect URI is refused: ${err.message}.`)
      if (err instanceof OAuth2Refused && err.reason === 'already_on') return sendPage(reply, 409, turnOnPage({ session, csrf: area.csrfField(session), consumer, clientId: await applications.clientOf(consumer.key), redirectUri, type }))
      throw err
    }
    await audited(area.actor(request, session), { kind: 'app', action: 'account.app_oauth2', target: consumer.key, before: null, after: { user: session.user.id, client_id: on.client.clientId, type: on.client.public ? 'public' : 'confidential', redirect_uris: on.client.redirectUris } })
    // The client's page shows its secret once (the OpenID Connect feature serves it).
    return showSecretOnce(area, reply, session, providerClientKind, on.client.clientId, on.secret)
  })
}
