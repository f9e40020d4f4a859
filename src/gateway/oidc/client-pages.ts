// A user's own OpenID Connect relying parties on the account pages
// (docs/oidc.md#registering-a-site): list, register (confidential or public; the client
// secret shown once, with a copy button, on the page the post redirects to, whose reload
// shows no secret and registers nothing, docs/gateway.md#a-new-secret-is-shown-once), edit the name and
// redirect URIs, rotate the secret with the overlap the owner chooses
// (docs/oidc.md#rotating-the-client-secret), delete. Rotating and deleting ask first, on a
// page of their own (no script). Every post is CSRF-checked by the account area; every
// change is audited (kind `oidc`, `by` the user); a user sees and changes only the clients
// they own.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { html, timeHtml, type SafeHtml } from '../../common/html.js'
import { copyButton, currentPasswordField, field, overlapChoice, page, sendPage, sendSecretPage, seeOther, shownOnceNotice, type AccountArea, type Confirmation, type SignedInSession } from '../account-area/index.js'
import { accountPaths, areaRotation, auditAction, registerAccountRotation } from '../registrations/lifecycle.js'
import { oidcClientKind } from './kind.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { InvalidInput, refused } from '../store/validation.js'
import { clientView } from './admin-api.js'
import { checkRedirectUri, type ClientDetails, type OidcClient, type OidcStore } from './store.js'
import { scopeDescriptions, scopesFromCheckboxes } from '../domain/scopes.js'
import { scopes as allScopes } from '../domain/identifiers.js'

const base = oidcClientKind.accountBase

const paths = accountPaths(oidcClientKind)
const notOwned = 'You have no OpenID Connect client with this client_id.'

interface FormInput {
  name: string
  redirectUris: string
  postLogoutRedirectUris: string
  type: string
  /** The API scopes ticked (OAuth 2.0 for the API, docs/oauth2.md#registering-a-client). */
  apiScopes?: string[]
  error?: string
}

interface Created {
  client: OidcClient
  secret: string | null
  rotated?: boolean
  /** After a rotation: until when the replaced secret keeps working (null: it stopped at once). */
  previousUntil?: Date | null
  /** A confidential client whose new secret was already shown (the page opened again). */
  shownBefore?: boolean
}

/** The URIs of a text area, one per line (blank lines ignored). */
const lines = (value: string) => value.split(/\r\n|\r|\n/).map((l) => l.trim()).filter((l) => l !== '')

/** A registration's or an edit's name and URIs as typed. */
type DetailsInput = Pick<FormInput, 'name' | 'redirectUris' | 'postLogoutRedirectUris'>

/** An edit refused: which client, and its form as typed. */
type EditInput = DetailsInput & { clientId: string; error?: string }

const detailsOf = (form: URLSearchParams): DetailsInput => ({
  name: (field(form, 'name') ?? '').trim(),
  redirectUris: field(form, 'redirect_uris') ?? '',
  postLogoutRedirectUris: field(form, 'post_logout_redirect_uris') ?? '',
})

/**
 * The name and URIs for the store, or what is wrong with them, in the words of the form:
 * a registration and an edit check alike. Each URI is checked here too, so that the
 * message names the one refused; the store checks them all again.
 */
function readDetails(input: DetailsInput): ClientDetails | { error: string } {
  if (input.name === '') return { error: 'Give the client a name.' }
  const redirectUris = lines(input.redirectUris)
  const postLogoutRedirectUris = lines(input.postLogoutRedirectUris)
  if (redirectUris.length === 0) return { error: 'Give at least one redirect URI the sign-in returns to.' }
  for (const [list, label] of [[redirectUris, 'redirect URI'], [postLogoutRedirectUris, 'post-logout redirect URI']] as const) {
    for (const uri of list) {
      try {
        checkRedirectUri(uri, label)
      } catch (err) {
        if (err instanceof InvalidInput) return { error: `The ${err.message}: ${JSON.stringify(uri.length > 200 ? `${uri.slice(0, 200)}…` : uri)}.` }
        throw err
      }
    }
  }
  return { name: input.name, redirectUris, postLogoutRedirectUris }
}

/** The store's refusal as a sentence of the form ("The name must…", "Give 1 to 10 redirect URIs"). */
const refusal = (err: InvalidInput): string => (err.field === 'redirect_uris' ? `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}` : `The ${err.message}`)

/** Each of the user's clients, its name and URIs in a form of its own (opened when an edit of it was refused). */
/** `askPassword`: the session's sign-in is not recent, so changing redirect URIs needs the current password. */
function editSection(o: { csrf: SafeHtml; clients: OidcClient[]; askPassword: boolean; edit?: EditInput }): SafeHtml {
  if (o.clients.length === 0) return html``
  return html`<section class="card" id="edit-clients">
<h2>Edit a client</h2>
<p class="muted">Changes apply at once, on the next sign-in. The client_id, type and secret stay as they are; people who signed in keep their access.</p>
${o.clients.map((k) => {
    const e = o.edit?.clientId === k.clientId ? o.edit : undefined
    const f = e ?? { name: k.name, redirectUris: k.redirectUris.join('\n'), postLogoutRedirectUris: k.postLogoutRedirectUris.join('\n') }
    return html`<details id="edit-${k.clientId}"${e ? html` open` : ''}><summary>${k.name}</summary>
${e?.error ? html`<div class="error" role="alert">${e.error}</div>` : ''}
<form method="post" action="${base}/${k.clientId}/edit">
${o.csrf}
<label for="name-${k.clientId}">Name <span class="muted">(shown to people when they sign in)</span></label>
<input type="text" id="name-${k.clientId}" name="name" value="${f.name}" maxlength="100" required>
<label for="redirect-${k.clientId}">Redirect URIs <span class="muted">(one per line; http or https, no fragment; compared exactly)</span></label>
<textarea id="redirect-${k.clientId}" name="redirect_uris" rows="3" required>${f.redirectUris}</textarea>
<label for="logout-${k.clientId}">Post-logout redirect URIs <span class="muted">(optional, one per line)</span></label>
<textarea id="logout-${k.clientId}" name="post_logout_redirect_uris" rows="2">${f.postLogoutRedirectUris}</textarea>
${currentPasswordField({ id: `password-${k.clientId}`, what: 'redirect URIs', needed: o.askPassword })}
<div class="actions"><button type="submit" class="secondary">Save changes</button></div>
</form>
</details>`
  })}
</section>`
}

function clientsPage(o: { session: SignedInSession; csrf: SafeHtml; clients: OidcClient[]; askPassword: boolean; discoveryUrl: string; form?: FormInput; edit?: EditInput; created?: Created; notice?: string }): string {
  const f = o.form ?? { name: '', redirectUris: '', postLogoutRedirectUris: '', type: 'confidential' }
  const c = o.created
  return page({
    title: 'Your OpenID Connect clients',
    user: o.session.user,
    csrfToken: o.session.csrfToken,
    copySecret: c !== undefined,
    body: html`<p><a href="/account">← Your account</a></p>
<h1>Your OpenID Connect clients</h1>
${o.notice ? html`<div class="notice" role="status">${o.notice}</div>` : ''}
${c ? html`<div class="card" id="created">
<h2>${c.shownBefore ? '' : c.rotated ? 'New secret for ' : 'Registered '}${c.client.name}</h2>
${c.shownBefore ? '' : c.secret === null ? html`<p class="muted">A public client has no secret: it proves itself with PKCE alone.</p>` : html`<div class="warn">Copy the client secret now: kigo shows it only this once.${c.rotated ? (c.previousUntil ? html` The secret it replaced keeps working until ${timeHtml(c.previousUntil.getTime())}; then only the new one works.` : ' The secret it replaced stopped working at once.') : ''}</div>`}
<dl>
<dt>client_id</dt><dd><code id="client_id">${c.client.clientId}</code>${copyButton('client_id', 'Copy the client_id')}</dd>
${c.shownBefore
      ? html`<dt>client_secret</dt><dd><span class="muted" id="client_secret_hidden">Shown once, when it was made. Lost it? Make a new one with “New secret…” below.</span></dd>`
      : c.secret === null ? '' : html`<dt>client_secret</dt><dd><code class="secret" id="client_secret">${c.secret}</code>${copyButton('client_secret', 'Copy the client_secret')}</dd>`}
<dt>Type</dt><dd>${c.client.public ? 'public' : 'confidential'}</dd>
<dt>API scopes</dt><dd>${c.client.apiScopes.length === 0 ? 'none (sign-in only)' : c.client.apiScopes.map((sc) => html`<code>${sc}</code> `)}</dd>
<dt>Redirect URIs</dt><dd>${c.client.redirectUris.map((u) => html`<code>${u}</code> `)}</dd>
</dl>
</div>` : ''}
<section class="card" id="clients">
<p class="muted">Sites and apps that sign people in with kigo through OpenID Connect (<a href="/developers#oidc">how</a>). The issuer is this site; discovery is at <code>${o.discoveryUrl}</code>.</p>
${o.clients.length === 0 ? html`<p class="muted">You have no OpenID Connect client.</p>` : html`<table class="cards">
<thead><tr><th>Name</th><th>client_id</th><th>Type</th><th>Redirect URIs</th><th>Registered</th><th></th></tr></thead>
<tbody>${o.clients.map((k) => html`<tr>
<td data-label="Name">${k.name}</td><td data-label="client_id"><code>${k.clientId}</code></td><td data-label="Type">${k.public ? 'public' : 'confidential'}</td>
<td data-label="Redirect URIs" class="url">${k.redirectUris.map((u) => html`<code>${u}</code> `)}</td><td data-label="Registered" class="nowrap">${timeHtml(k.createdAt, { dateOnly: true })}</td>
<td class="row-actions">${k.public ? '' : html`<a href="${base}/${k.clientId}/rotate-secret">New secret…</a><br>`}<a href="${base}/${k.clientId}/delete">Delete…</a></td>
</tr>`)}</tbody></table>`}
</section>
${editSection({ csrf: o.csrf, clients: o.clients, askPassword: o.askPassword, ...(o.edit ? { edit: o.edit } : {}) })}
<section class="card" id="register-client">
<h2>Register an OpenID Connect client</h2>
${f.error ? html`<div class="error" role="alert">${f.error}</div>` : ''}
<form method="post" action="${base}">
${o.csrf}
<label for="client_name">Name <span class="muted">(shown to people when they sign in)</span></label>
<input type="text" id="client_name" name="name" value="${f.name}" maxlength="100" required>
<label for="client_redirect_uris">Redirect URIs <span class="muted">(one per line; http or https, no fragment; compared exactly)</span></label>
<textarea id="client_redirect_uris" name="redirect_uris" rows="3" placeholder="https://example.com/oidc/callback" required>${f.redirectUris}</textarea>
<label for="client_post_logout">Post-logout redirect URIs <span class="muted">(optional, one per line)</span></label>
<textarea id="client_post_logout" name="post_logout_redirect_uris" rows="2" placeholder="https://example.com/">${f.postLogoutRedirectUris}</textarea>
<label>Type</label>
<label class="check"><input type="radio" name="type" value="confidential"${f.type === 'public' ? '' : ' checked'}> Confidential: a server that keeps a client secret</label>
<label class="check"><input type="radio" name="type" value="public"${f.type === 'public' ? ' checked' : ''}> Public: an app in a browser or on a device, no secret (PKCE only)</label>
<label>API access <span class="muted">(OAuth 2.0: what the client may ask people for; none to sign people in only)</span></label>
${allScopes.map((sc) => html`<label class="check"><input type="checkbox" name="api_scope" value="${sc}"${(f.apiScopes ?? []).includes(sc) ? ' checked' : ''}> <span>${scopeDescriptions[sc]} <span class="muted">(${sc})</span></span></label>`)}
<div class="actions"><button type="submit">Register</button></div>
</form>
</section>`,
  })
}

const confirmations = {
  'rotate-secret': {
    title: 'New client secret?',
    text: 'kigo makes a new client secret and shows it once. The current secret keeps working for as long as you choose below, and then stops: the site cannot sign anyone in until it uses the new one.',
    button: 'Make a new secret',
  },
  delete: {
    title: 'Delete this client?',
    text: 'The client_id stops working at once: nobody can sign in to the site with kigo any more, and every sign-in people gave it is revoked. This cannot be undone.',
    button: 'Delete the client',
  },
} as const

/** The account area's confirmation step (confirmFirst) for rotating or deleting `client`. */
function confirmation(client: OidcClient, action: keyof typeof confirmations): Confirmation {
  const c = confirmations[action]
  return {
    action: `${base}/${client.clientId}/${action}`,
    title: c.title,
    message: `${client.name} (client_id ${client.clientId}): ${c.text}`,
    button: c.button,
    cancel: base,
    ...(action === 'rotate-secret' ? { choice: overlapChoice } : {}),
  }
}

export function registerClientPages(app: FastifyInstance, o: { area: AccountArea; store: OidcStore; audit?: Pick<AuditStore, 'record'> }): void {
  const { area, store } = o
  /** Where a registration or rotation sends the browser: the page that shows the new secret once. */
  const newSecretPath = paths.newSecret
  const slotOf = paths.slot
  const audited = auditTrail(o.audit, app.log)
  // The deployment's main URL, as the issuer and the guide name it, on every alias.
  const discoveryUrl = (reply: FastifyReply) => `${reply.request.deployment!.baseUrl}/.well-known/openid-configuration`
  // A page showing a secret carries its copy script (allowed by its hash).
  const render = async (reply: FastifyReply, status: number, session: SignedInSession, extra: Omit<Parameters<typeof clientsPage>[0], 'session' | 'csrf' | 'clients' | 'discoveryUrl' | 'askPassword'> = {}) =>
    (extra.created ? sendSecretPage : sendPage)(reply, status, clientsPage({ session, csrf: area.csrfField(session), clients: await store.listClients(session.user.id), askPassword: !area.proof.recent(session), discoveryUrl: discoveryUrl(reply), ...extra }))

  /** The signed-in user's own client named in the path, or null after answering 404. */
  const own = async (request: FastifyRequest, reply: FastifyReply, session: SignedInSession): Promise<OidcClient | null> => {
    const id = (request.params as { id: string }).id
    const found = await store.findClient(id)
    if (!found || found.ownerId !== session.user.id) {
      await render(reply, 404, session, { notice: notOwned })
      return null
    }
    return found
  }

  app.get(base, async (request, reply) => {
    request.routeName = 'account'
    const session = await area.requireSignIn(request, reply, { next: base })
    if (!session) return reply
    const n = (request.query as Record<string, unknown>).notice
    return render(reply, 200, session, n === 'deleted' ? { notice: 'The client was deleted: its client_id no longer works.' } : n === 'edited' ? { notice: 'Your changes to the client were saved and apply at once.' } : {})
  })

  app.post(base, async (request, reply) => {
    request.routeName = 'account'
    const posted = await area.signedInPost(request, reply)
    if (!posted) return reply
    const { session, form } = posted
    const input: FormInput = { ...detailsOf(form), type: field(form, 'type') ?? '', apiScopes: scopesFromCheckboxes(form.getAll('api_scope')) }
    const refuse = (error: string) => render(reply, 400, session, { form: { ...input, error } })
    if (input.name === '') return refuse('Give the client a name.')
    if (input.type !== 'confidential' && input.type !== 'public') return refuse('Choose whether the client is confidential (it keeps a secret) or public.')
    const details = readDetails(input)
    if ('error' in details) return refuse(`${details.error} Nothing was registered.`)
    let created: Created
    try {
      created = await store.createClient({ ...details, ownerId: session.user.id, public: input.type === 'public', apiScopes: input.apiScopes ?? [] })
    } catch (err) {
      if (err instanceof InvalidInput) return refuse(`${refusal(err)}; nothing was registered.`)
      throw err
    }
    await audited(area.actor(request, session), { kind: 'oidc', action: auditAction(oidcClientKind, 'create'), target: created.client.clientId, before: null, after: clientView(created.client) })
    if (created.secret !== null) await area.holdNewSecret(session, slotOf(created.client.clientId), { secret: created.secret })
    return seeOther(reply, newSecretPath(created.client.clientId))
  })

  // The owner edits the name and redirect URIs: checked as a registration is, and refused
  // whole (the form again, as typed, with why). The provider reads a client from the store
  // on every request, so every gateway uses the change at once.
  app.post(`${base}/:id/edit`, async (request, reply) => {
    const owned = await area.ownedPost(request, reply, own)
    if (!owned) return reply
    const { posted, item: client } = owned
    const { session } = posted
    const input = detailsOf(posted.form)
    const refuseWith = (status: number, error: string) => render(reply, status, session, { edit: { ...input, clientId: client.clientId, error: `${error} Nothing was changed.` } })
    const refuse = (error: string) => refuseWith(400, error)
    const details = readDetails(input)
    if ('error' in details) return refuse(details.error)
    // A new place to send people back to, with codes or after signing out, needs proof of the
    // owner, not only of the session (removing or reordering URIs sends nobody anywhere new).
    const adds = details.redirectUris.some((u) => !client.redirectUris.includes(u)) || details.postLogoutRedirectUris.some((u) => !client.postLogoutRedirectUris.includes(u))
    if (adds && (await area.proof.unproven(request, reply, session, field(posted.form, 'current_password') ?? '', refuseWith, 'Enter your current password to change the redirect URIs.', { orRecentSignIn: true }))) return reply
    const edited = await store.updateClient(client.clientId, details).catch(refused)
    if (edited instanceof InvalidInput) return refuse(`${refusal(edited)}.`)
    if (!edited) return render(reply, 404, session, { notice: notOwned })
    await audited(area.actor(request, session), { kind: 'oidc', action: auditAction(oidcClientKind, 'edit'), target: client.clientId, before: clientView(edited.before), after: clientView(edited.after) })
    return seeOther(reply, `${base}?notice=edited`)
  })

  for (const action of ['rotate-secret', 'delete'] as const) {
    app.get(`${base}/:id/${action}`, async (request, reply) => {
      request.routeName = 'account'
      const id = (request.params as { id: string }).id
      const session = await area.requireSignIn(request, reply, { next: /^[A-Za-z0-9_-]{1,128}$/.test(id) ? `${base}/${id}/${action}` : base })
      if (!session) return reply
      const client = await own(request, reply, session)
      if (!client) return reply
      if (action === 'rotate-secret' && client.public) return render(reply, 409, session, { notice: 'This is a public client: it has no secret to rotate.' })
      // The link's page: the confirmation, whose button posts confirmed.
      return area.confirmFirst(reply, session, new URLSearchParams(), confirmation(client, action))
    })
  }

  registerAccountRotation(app, {
    ...areaRotation(area, audited, own),
    kind: oidcClientKind,
    param: 'id',
    idOf: (client) => client.clientId,
    secretless: (client) => client.public,
    words: (client) => { const { action: _action, choice: _choice, ...words } = confirmation(client, 'rotate-secret'); return words },
    async rotate(client, overlapSeconds) {
      const rotated = await store.rotateClientSecret(client.clientId, { overlapSeconds })
      return rotated === null ? 'not_found' : rotated === 'public' ? 'no_secret' : rotated
    },
    refuse: (reply, session, _client, why) =>
      why === 'overlap' ? render(reply, 400, session, { notice: 'Choose how long the old secret keeps working: none, 1 hour, 24 hours or 7 days. Nothing was changed.' })
        : why === 'no_secret' ? render(reply, 409, session, { notice: 'This is a public client: it has no secret to rotate.' }) : render(reply, 404, session, { notice: notOwned }),
  })

  // The page a registration or rotation redirects to: the new secret, the first time the
  // session that made it opens it; opened again, the client without it. A public client
  // has no secret: its page is the same every time.
  app.get(`${base}/:id/new-secret`, async (request, reply) => {
    request.routeName = 'account'
    const id = (request.params as { id: string }).id
    const session = await area.requireSignIn(request, reply, { next: newSecretPath(id) })
    if (!session) return reply
    const client = await own(request, reply, session)
    if (!client) return reply
    if (client.public) return render(reply, 200, session, { created: { client, secret: null } })
    const shown = await area.takeNewSecret(session, slotOf(client.clientId))
    if (shown === null) return render(reply, 200, session, { created: { client, secret: null, shownBefore: true }, notice: shownOnceNotice('client secret', 'Make a new one with “New secret…” below.') })
    return render(reply, 200, session, { created: { client, secret: shown.secret, ...(shown.previousUntil === undefined ? {} : { rotated: true, previousUntil: shown.previousUntil }) } })
  })

  app.post(`${base}/:id/delete`, async (request, reply) => {
    const owned = await area.ownedPost(request, reply, own)
    if (!owned) return reply
    const { posted, item: client } = owned
    const { session } = posted
    const asked = area.confirmFirst(reply, session, posted.form, confirmation(client, 'delete'))
    if (asked) return asked
    const deleted = await store.deleteClient(client.clientId)
    if (deleted) await audited(area.actor(request, session), { kind: 'oidc', action: auditAction(oidcClientKind, 'delete'), target: client.clientId, before: { ...clientView(deleted.client), grants: deleted.grants }, after: null })
    return seeOther(reply, `${base}?notice=deleted`)
  })
}
