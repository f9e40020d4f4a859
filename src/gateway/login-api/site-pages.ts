// A user's own login sites on the account pages (docs/login-api.md#users):
// list, register (the secret shown once, with a copy button, on the page the post
// redirects to; a reload of it shows no secret and registers nothing,
// docs/gateway.md#a-new-secret-is-shown-once),
// edit the name, callback and home page, rotate the secret with the overlap the owner
// chooses (docs/login-api.md#rotating-the-secret), delete. Every post is CSRF-checked by
// the account area; every change is audited.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { datesHtml, html, timeHtml, type SafeHtml } from '../../common/html.js'
import { isoSeconds } from '../../common/time.js'
import { copyButton, currentPasswordField, field, loginApiStanding, page, sendPage, sendSecretPage, seeOther, shownOnceNotice, type AccountArea, type SignedInSession } from '../account-area/index.js'
import type { MethodPolicy } from '../policy/types.js'
import { accountPaths, areaRotation, auditAction, registerAccountRotation, type RegistrationKind } from '../registrations/lifecycle.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import { InvalidInput, refused } from '../store/validation.js'
import type { LoginSite, LoginSiteStore, SiteDetails } from './store.js'


/** Login sites as the registrations' lifecycle names them. */
export const siteKind: RegistrationKind = { name: 'site', auditKind: 'site', accountBase: '/account/sites', slot: 'site' }
const paths = accountPaths(siteKind)

export const siteView = (s: LoginSite) => ({ api_key: s.apiKey, name: s.name, owner: s.ownerId, callback: s.callbackUrl, home_page: s.homeUrl, created_at: isoSeconds(s.createdAt) })

/** A registration's or an edit's fields as typed. */
interface SiteForm {
  name: string
  callback: string
  home: string
  error?: string
}

/** An edit refused: which site, and its form as typed. */
type SiteEdit = SiteForm & { apiKey: string }

/** A site on the page a registration or rotation redirected to; `secret` is null once it was shown. */
interface CreatedSite {
  site: LoginSite
  secret: string | null
  rotated?: boolean
  previousUntil?: Date | null
}

const siteFormOf = (form: URLSearchParams): SiteForm => ({
  name: (field(form, 'name') ?? '').trim(),
  callback: (field(form, 'callback') ?? '').trim(),
  home: (field(form, 'home_url') ?? '').trim(),
})

/** What a registration and an edit refuse before the store is asked (the store checks the rest, for both), or null. */
const missingField = (f: SiteForm): string | null =>
  f.name === '' ? 'Give the site a name.' : f.callback === '' ? 'Give the callback URL the sign-in returns to.' : null

/** The fields as the store takes them (an empty home page: none). */
const siteDetails = (f: SiteForm): SiteDetails => ({ name: f.name, callbackUrl: f.callback, homeUrl: f.home === '' ? null : f.home })

/** Each of the user's sites, its details in a form of its own (opened when an edit of it was refused). */
/** `askPassword`: the session's sign-in is not recent, so changing a callback needs the current password. */
function editSection(o: { csrf: SafeHtml; sites: LoginSite[]; askPassword: boolean; edit?: SiteEdit }): SafeHtml {
  if (o.sites.length === 0) return html``
  return html`<section class="card" id="edit-sites">
<h2>Edit a site</h2>
<p class="muted">Changes apply at once, on the next sign-in. The api_key and secret stay as they are.</p>
${o.sites.map((s) => {
    const e = o.edit?.apiKey === s.apiKey ? o.edit : undefined
    const f = e ?? { name: s.name, callback: s.callbackUrl, home: s.homeUrl ?? '' }
    return html`<details id="edit-${s.apiKey}"${e ? html` open` : ''}><summary>${s.name}</summary>
${e?.error ? html`<div class="error" role="alert">${e.error}</div>` : ''}
<form method="post" action="/account/sites/${s.apiKey}/edit">
${o.csrf}
<label for="name-${s.apiKey}">Name</label>
<input type="text" id="name-${s.apiKey}" name="name" value="${f.name}" maxlength="100" required>
<label for="callback-${s.apiKey}">Callback URL</label>
<input type="url" id="callback-${s.apiKey}" name="callback" value="${f.callback}" required>
<label for="home-${s.apiKey}">Home page <span class="muted">(optional; linked on the page where people sign in)</span></label>
<input type="url" id="home-${s.apiKey}" name="home_url" value="${f.home}" placeholder="https://example.com/">
${currentPasswordField({ id: `password-${s.apiKey}`, what: 'callback URL', needed: o.askPassword })}
<div class="actions"><button type="submit" class="secondary">Save changes</button></div>
</form>
</details>`
  })}
</section>`
}

/** The site just registered or given a new secret: its api_key, and its secret the first time the page is opened. */
function createdCard(c: CreatedSite): SafeHtml {
  const heading = c.secret === null ? c.site.name : `${c.rotated ? 'New secret for' : 'Registered'} ${c.site.name}`
  return html`<div class="card" id="created">
<h2>${heading}</h2>
${c.secret === null ? '' : html`<div class="warn">Copy the secret now: kigo shows it only this once.${c.rotated ? (c.previousUntil ? html` The secret it replaced keeps working until ${timeHtml(c.previousUntil.getTime())}; then only the new one works.` : ' The secret it replaced stopped working at once.') : ''}</div>`}
<dl>
<dt>api_key</dt><dd><code id="api_key">${c.site.apiKey}</code>${copyButton('api_key', 'Copy the api_key')}</dd>
<dt>secret</dt><dd>${c.secret === null
    ? html`<span class="muted" id="secret_hidden">Shown once, when it was made. Lost it? Make a new one with “New secret…” below.</span>`
    : html`<code class="secret" id="secret">${c.secret}</code>${copyButton('secret', 'Copy the secret')}`}</dd>
</dl>
</div>`
}

function sitesPage(o: { session: SignedInSession; csrf: SafeHtml; sites: LoginSite[]; askPassword: boolean; form?: SiteForm; edit?: SiteEdit; created?: CreatedSite; notice?: string; standing?: { text: string } | null }): string {
  const f = o.form ?? { name: '', callback: '', home: '' }
  return page({
    title: 'Your login sites',
    user: o.session.user,
    csrfToken: o.session.csrfToken,
    copySecret: o.created !== undefined,
    body: html`<p><a href="/account">← Your account</a></p>
<h1>Your login sites</h1>
${o.notice ? html`<div class="notice" role="status">${o.notice}</div>` : ''}
${o.created ? createdCard(o.created) : ''}
<section class="card" id="sites">
<p class="muted">${o.standing ? html`${datesHtml(o.standing.text)} ` : ''}New sites should sign people in with OpenID Connect or OAuth (<a href="/developers#login-api">how</a>).</p>
${o.sites.length === 0 ? html`<p class="muted">You have no login site.</p>` : html`<table class="cards">
<thead><tr><th>Name</th><th>api_key</th><th>Callback</th><th>Registered</th><th></th></tr></thead>
<tbody>${o.sites.map((s) => html`<tr>
<td data-label="Name">${s.name}</td><td data-label="api_key"><code>${s.apiKey}</code></td><td data-label="Callback" class="url">${s.callbackUrl}</td><td data-label="Registered" class="nowrap">${timeHtml(s.createdAt, { dateOnly: true })}</td>
<td class="row-actions"><form method="post" action="/account/sites/${s.apiKey}/rotate-secret">${o.csrf}<button type="submit" class="secondary">New secret…</button></form>
<form method="post" action="/account/sites/${s.apiKey}/delete">${o.csrf}<button type="submit" class="danger">Delete…</button></form></td>
</tr>`)}</tbody></table>`}
</section>
${editSection({ csrf: o.csrf, sites: o.sites, askPassword: o.askPassword, ...(o.edit ? { edit: o.edit } : {}) })}
<section class="card" id="register-site">
<h2>Register a login site</h2>
${f.error ? html`<div class="error" role="alert">${f.error}</div>` : ''}
<form method="post" action="/account/sites">
${o.csrf}
<label for="site_name">Name</label>
<input type="text" id="site_name" name="name" value="${f.name}" maxlength="100" required>
<label for="site_callback">Callback URL</label>
<input type="url" id="site_callback" name="callback" value="${f.callback}" placeholder="https://example.com/login/callback" required>
<label for="site_home">Home page <span class="muted">(optional; linked on the page where people sign in)</span></label>
<input type="url" id="site_home" name="home_url" value="${f.home}" placeholder="https://example.com/">
<div class="actions"><button type="submit">Register</button></div>
</form>
</section>`,
  })
}

export function registerSitePages(app: FastifyInstance, o: { area: AccountArea; sites: LoginSiteStore; now: () => number; audit?: Pick<AuditStore, 'record'>; policy?: () => MethodPolicy }): void {
  const { area, sites } = o
  /** Where a registration or rotation sends the browser: the page that shows the new secret once. */
  const newSecretPath = paths.newSecret
  const slotOf = paths.slot
  const audited = auditTrail(o.audit, app.log)
  // A page showing a secret carries its copy script (allowed by its hash).
  const render = async (reply: FastifyReply, status: number, session: SignedInSession, extra: Omit<Parameters<typeof sitesPage>[0], 'session' | 'csrf' | 'sites' | 'askPassword'> = {}) =>
    (extra.created ? sendSecretPage : sendPage)(reply, status, sitesPage({ session, csrf: area.csrfField(session), sites: await sites.list(session.user.id), askPassword: !area.proof.recent(session), standing: o.policy ? loginApiStanding(o.policy(), o.now()) : null, ...extra }))

  app.get('/account/sites', async (request, reply) => {
    request.routeName = 'account'
    const session = await area.requireSignIn(request, reply, { next: '/account/sites' })
    if (!session) return reply
    const n = (request.query as Record<string, unknown>).notice
    return render(reply, 200, session, n === 'deleted' ? { notice: 'The site was deleted: its api_key no longer works.' } : n === 'edited' ? { notice: 'Your changes to the site were saved and apply at once.' } : {})
  })

  app.post('/account/sites', async (request, reply) => {
    request.routeName = 'account'
    const posted = await area.signedInPost(request, reply)
    if (!posted) return reply
    const { session, form } = posted
    const input = siteFormOf(form)
    const missing = missingField(input)
    if (missing !== null) return render(reply, 400, session, { form: { ...input, error: missing } })
    try {
      const created = await sites.create({ ...siteDetails(input), ownerId: session.user.id })
      await audited(area.actor(request, session), { kind: 'site', action: auditAction(siteKind, 'create'), target: created.site.apiKey, before: null, after: siteView(created.site) })
      await area.holdNewSecret(session, slotOf(created.site.apiKey), { secret: created.secret })
      return seeOther(reply, newSecretPath(created.site.apiKey))
    } catch (err) {
      if (err instanceof InvalidInput) return render(reply, 400, session, { form: { ...input, error: `The ${err.message}; nothing was registered.` } })
      throw err
    }
  })

  /** The signed-in user's own site named in the path, or null after answering 404. */
  const own = async (request: FastifyRequest, reply: FastifyReply, session: SignedInSession): Promise<LoginSite | null> => {
    const key = (request.params as { key: string }).key
    const found = await sites.find(key)
    if (!found || found.ownerId !== session.user.id) {
      await render(reply, 404, session, { notice: 'You have no login site with this api_key.' })
      return null
    }
    return found
  }

  // The owner edits the name, callback and home page: checked as a registration is, and
  // refused whole (the form again, as typed, with why). Sites are read from the store on
  // every sign-in and exchange, so every gateway uses the change at once.
  app.post('/account/sites/:key/edit', async (request, reply) => {
    const owned = await area.ownedPost(request, reply, own)
    if (!owned) return reply
    const { posted, item: site } = owned
    const input = siteFormOf(posted.form)
    const refuseWith = (status: number, error: string) => render(reply, status, posted.session, { edit: { ...input, apiKey: site.apiKey, error: `${error} Nothing was changed.` } })
    const refuse = (error: string) => refuseWith(400, error)
    const missing = missingField(input)
    if (missing !== null) return refuse(missing)
    // A new callback is where people's sign-ins go: it needs proof of the owner, not only of the session.
    if (input.callback !== site.callbackUrl && (await area.proof.unproven(request, reply, posted.session, field(posted.form, 'current_password') ?? '', refuseWith, 'Enter your current password to change the callback URL.', { orRecentSignIn: true }))) return reply
    const edited = await sites.update(site.apiKey, siteDetails(input)).catch(refused)
    if (edited instanceof InvalidInput) return refuse(`The ${edited.message}.`)
    if (!edited) return render(reply, 404, posted.session, { notice: 'You have no login site with this api_key.' })
    await audited(area.actor(request, posted.session), { kind: 'site', action: auditAction(siteKind, 'edit'), target: site.apiKey, before: siteView(edited.before), after: siteView(edited.after) })
    return seeOther(reply, '/account/sites?notice=edited')
  })

  const overlapRefused = 'Choose how long the old secret keeps working: none, 1 hour, 24 hours or 7 days. Nothing was changed.'
  registerAccountRotation(app, {
    ...areaRotation(area, audited, own),
    kind: siteKind,
    param: 'key',
    idOf: (site) => site.apiKey,
    words: (site) => ({ title: `New secret for ${site.name}?`, message: 'A new secret is made and shown once. The current one keeps working for as long as you choose below, and then stops: the site cannot sign anyone in until it is given the new one.', button: 'Make a new secret', cancel: '/account/sites' }),
    rotate: async (site, overlapSeconds) => (await sites.rotateSecret(site.apiKey, { overlapSeconds, now: o.now() })) ?? 'not_found',
    refuse: (reply, session, _site, why) => render(reply, why === 'overlap' ? 400 : 404, session, { notice: why === 'overlap' ? overlapRefused : 'You have no login site with this api_key.' }),
  })

  // The page a registration or rotation redirects to: the new secret, the first time the
  // session that made it opens it; opened again, the site without it.
  app.get('/account/sites/:key/new-secret', async (request, reply) => {
    request.routeName = 'account'
    const key = (request.params as { key: string }).key
    const session = await area.requireSignIn(request, reply, { next: newSecretPath(key) })
    if (!session) return reply
    const site = await own(request, reply, session)
    if (!site) return reply
    const shown = await area.takeNewSecret(session, slotOf(site.apiKey))
    if (shown === null) return render(reply, 200, session, { created: { site, secret: null }, notice: shownOnceNotice('secret', 'Make a new one with “New secret…” below.') })
    return render(reply, 200, session, { created: { site, secret: shown.secret, ...(shown.previousUntil === undefined ? {} : { rotated: true, previousUntil: shown.previousUntil }) } })
  })

  app.post('/account/sites/:key/delete', async (request, reply) => {
    const owned = await area.ownedPost(request, reply, own)
    if (!owned) return reply
    const { posted, item: site } = owned
    const asked = area.confirmFirst(reply, posted.session, posted.form, { action: paths.delete(site.apiKey), title: `Delete ${site.name}?`, message: 'The site is deleted: its api_key and secret stop working, and so does every sign-in it started. This cannot be undone.', button: 'Delete the site', cancel: '/account/sites' })
    if (asked) return asked
    const deleted = await sites.delete(site.apiKey)
    if (deleted) await audited(area.actor(request, posted.session), { kind: 'site', action: auditAction(siteKind, 'delete'), target: site.apiKey, before: siteView(deleted), after: null })
    return seeOther(reply, '/account/sites?notice=deleted')
  })
}
