// A user's own OpenID Connect relying parties on the account pages
// (docs/oidc.md#registering-a-site): list, register (confidential or public; the client
// secret shown once, with a copy button, on the page the post redirects to, whose reload
// shows no secret and registers nothing, docs/gateway.md#a-new-secret-is-shown-once), edit the name and
// redirect URIs, rotate the secret with the overlap the owner chooses
// (docs/oidc.md#rotating-the-client-secret), delete. Rotating and deleting ask first, on a
// page of their own (no script). Every post is CSRF-checked by the account area; every
// change is audited (kind `oidc`, `by` the user); a user sees and changes only the clients
// they own.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { html, timeHtml, type SafeHtml } from '../../common/html.js'
import { copyButton, currentPasswordField, field, page, sendPage, sendSecretPage, shownOnceNotice, type AccountArea, type Confirmation, type SignedInSession } from '../account-area/index.js'
import { FormRefusal, registerRegistrationPages } from '../registrations/account-pages.js'
import { oidcClientKind } from './kind.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { InvalidInput } from '../store/validation.js'
import { clientView } from './admin-api.js'
import { checkRedirectUri, type ClientDetails, type OidcClient, type OidcStore } from './store.js'
import { scopeDescriptions, scopesFromCheckboxes } from '../domain/scopes.js'
import { scopes as allScopes } from '../domain/identifiers.js'

const base = oidcClientKind.accountBase
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
function readDetails(input: DetailsInput): ClientDetails | FormRefusal {
  if (input.name === '') return new FormRefusal('Give the client a name.')
  const redirectUris = lines(input.redirectUris)
  const postLogoutRedirectUris = lines(input.postLogoutRedirectUris)
  if (redirectUris.length === 0) return new FormRefusal('Give at least one redirect URI the sign-in returns to.')
  for (const [list, label] of [[redirectUris, 'redirect URI'], [postLogoutRedirectUris, 'post-logout redirect URI']] as const) {
    for (const uri of list) {
      try {
        checkRedirectUri(uri, label)
      } catch (err) {
        if (err instanceof InvalidInput) return new FormRefusal(`The ${err.message}: ${JSON.stringify(uri.length > 200 ? `${uri.slice(0, 200)}…` : uri)}.`)
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

/** The confirmation page's words for rotating or deleting `client`. */
function confirmation(client: OidcClient, action: keyof typeof confirmations): Omit<Confirmation, 'action'> {
  const c = confirmations[action]
  return { title: c.title, message: `${client.name} (client_id ${client.clientId}): ${c.text}`, button: c.button, cancel: base }
}

export function registerClientPages(app: FastifyInstance, o: { area: AccountArea; store: OidcStore; audit?: Pick<AuditStore, 'record'> }): void {
  const { area, store } = o
  // The deployment's main URL, as the issuer and the guide name it, on every alias.
  const discoveryUrl = (reply: FastifyReply) => `${reply.request.deployment!.baseUrl}/.well-known/openid-configuration`
  // A page showing a secret carries its copy script (allowed by its hash).
  const render = async (reply: FastifyReply, status: number, session: SignedInSession, extra: Omit<Parameters<typeof clientsPage>[0], 'session' | 'csrf' | 'clients' | 'discoveryUrl' | 'askPassword'> = {}) =>
    (extra.created ? sendSecretPage : sendPage)(reply, status, clientsPage({ session, csrf: area.csrfField(session), clients: await store.listClients(session.user.id), askPassword: !area.proof.recent(session), discoveryUrl: discoveryUrl(reply), ...extra }))
  const notice = (reply: FastifyReply, status: number, session: SignedInSession, text: string) => render(reply, status, session, { notice: text })

  registerRegistrationPages(app, area, {
    kind: oidcClientKind,
    audited: auditTrail(o.audit, app.log),
    find: (id) => store.findClient(id),
    idOf: (client) => client.clientId,
    notOwned: (reply, session) => notice(reply, 404, session, notOwned),
    list: {
      notices: { deleted: 'The client was deleted: its client_id no longer works.', edited: 'Your changes to the client were saved and apply at once.' },
      show: (reply, session, text) => render(reply, 200, session, text ? { notice: text } : {}),
    },
    register: {
      read: (form): FormInput => ({ ...detailsOf(form), type: field(form, 'type') ?? '', apiScopes: scopesFromCheckboxes(form.getAll('api_scope')) }),
      check(input) {
        if (input.name === '') return new FormRefusal('Give the client a name.')
        if (input.type !== 'confidential' && input.type !== 'public') return new FormRefusal('Choose whether the client is confidential (it keeps a secret) or public.')
        const details = readDetails(input)
        if (details instanceof FormRefusal) return new FormRefusal(`${details.error} Nothing was registered.`)
        return { ...details, public: input.type === 'public', apiScopes: input.apiScopes ?? [] }
      },
      create: async (details, session) => {
        const created = await store.createClient({ ...details, ownerId: session.user.id })
        return { item: created.client, secret: created.secret }
      },
      refusal: (err) => `${refusal(err)}; nothing was registered.`,
      refuse: (reply, session, input, status, error) => render(reply, status, session, { form: { ...input, ...(error === undefined ? {} : { error }) } }),
      auditView: clientView,
    },
    // The name and redirect URIs. The provider reads a client from the store on every request.
    edit: {
      read: detailsOf,
      check: readDetails,
      // Removing or reordering URIs sends nobody anywhere new; adding one, with codes or after signing out, does.
      proofAsked: (details, client) =>
        details.redirectUris.some((u) => !client.redirectUris.includes(u)) || details.postLogoutRedirectUris.some((u) => !client.postLogoutRedirectUris.includes(u))
          ? 'Enter your current password to change the redirect URIs.'
          : null,
      update: (client, details) => store.updateClient(client.clientId, details),
      refusal: (err) => `${refusal(err)}.`,
      refuse: (reply, session, client, input, status, error) => render(reply, status, session, { edit: { ...input, clientId: client.clientId, error } }),
      auditView: clientView,
    },
    rotation: {
      secretless: (client) => client.public,
      words: (client) => confirmation(client, 'rotate-secret'),
      async rotate(client, overlapSeconds) {
        const rotated = await store.rotateClientSecret(client.clientId, { overlapSeconds })
        return rotated === null ? 'not_found' : rotated === 'public' ? 'no_secret' : rotated
      },
      refuse: (reply, session, _client, why) =>
        why === 'overlap' ? notice(reply, 400, session, 'Choose how long the old secret keeps working: none, 1 hour, 24 hours or 7 days. Nothing was changed.')
          : why === 'no_secret' ? notice(reply, 409, session, 'This is a public client: it has no secret to rotate.') : notice(reply, 404, session, notOwned),
    },
    deletion: {
      words: (client) => confirmation(client, 'delete'),
      async remove(client) {
        const deleted = await store.deleteClient(client.clientId)
        return deleted && { ...clientView(deleted.client), grants: deleted.grants }
      },
    },
    // A public client has no secret: its page is the same every time.
    showSecret: (_request, reply, session, client, shown) =>
      client.public ? render(reply, 200, session, { created: { client, secret: null } })
        : shown === null ? render(reply, 200, session, { created: { client, secret: null, shownBefore: true }, notice: shownOnceNotice('client secret', 'Make a new one with “New secret…” below.') })
          : render(reply, 200, session, { created: { client, secret: shown.secret, ...(shown.previousUntil === undefined ? {} : { rotated: true, previousUntil: shown.previousUntil }) } }),
    // Rotating and deleting are links in the list, each to its confirmation page.
    confirmLinks: true,
  })
}
