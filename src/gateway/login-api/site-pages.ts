// A user's own login sites on the account pages (docs/login-api.md#users):
// list, register (the secret shown once, with a copy button, on the page the post
// redirects to; a reload of it shows no secret and registers nothing,
// docs/gateway.md#a-new-secret-is-shown-once),
// edit the name, callback and home page, rotate the secret with the overlap the owner
// chooses (docs/login-api.md#rotating-the-secret), delete. Every post is CSRF-checked by
// the account area; every change is audited.
import type { FastifyInstance, FastifyReply } from 'fastify'
import { datesHtml, html, timeHtml, type SafeHtml } from '../../common/html.js'
import { isoSeconds } from '../../common/time.js'
import { copyButton, currentPasswordField, field, loginApiStanding, page, sendPage, sendSecretPage, shownOnceNotice, type AccountArea, type SignedInSession } from '../account-area/index.js'
import type { MethodPolicy } from '../policy/types.js'
import type { RegistrationKind } from '../registrations/lifecycle.js'
import { FormRefusal, registerRegistrationPages } from '../registrations/account-pages.js'
import type { AuditStore } from '../audit/store.js'
import { auditTrail } from '../audit/audited.js'
import type { LoginSite, LoginSiteStore, SiteDetails } from './store.js'

/** Login sites as the registrations' lifecycle names them. */
export const siteKind: RegistrationKind = { name: 'site', auditKind: 'site', accountBase: '/account/sites', slot: 'site', param: 'key' }

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

/**
 * The fields as the store takes them (an empty home page: none), or what a registration and
 * an edit refuse before the store is asked (the store checks the rest, for both).
 */
const siteDetails = (f: SiteForm): SiteDetails | FormRefusal =>
  f.name === '' ? new FormRefusal('Give the site a name.')
    : f.callback === '' ? new FormRefusal('Give the callback URL the sign-in returns to.')
      : { name: f.name, callbackUrl: f.callback, homeUrl: f.home === '' ? null : f.home }

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
  // A page showing a secret carries its copy script (allowed by its hash).
  const render = async (reply: FastifyReply, status: number, session: SignedInSession, extra: Omit<Parameters<typeof sitesPage>[0], 'session' | 'csrf' | 'sites' | 'askPassword'> = {}) =>
    (extra.created ? sendSecretPage : sendPage)(reply, status, sitesPage({ session, csrf: area.csrfField(session), sites: await sites.list(session.user.id), askPassword: !area.proof.recent(session), standing: o.policy ? loginApiStanding(o.policy(), o.now()) : null, ...extra }))
  const notOwned = (reply: FastifyReply, session: SignedInSession) => render(reply, 404, session, { notice: 'You have no login site with this api_key.' })

  registerRegistrationPages(app, area, {
    kind: siteKind,
    audited: auditTrail(o.audit, app.log),
    find: (key) => sites.find(key),
    idOf: (site) => site.apiKey,
    notOwned,
    list: {
      notices: { deleted: 'The site was deleted: its api_key no longer works.', edited: 'Your changes to the site were saved and apply at once.' },
      show: (reply, session, notice) => render(reply, 200, session, notice ? { notice } : {}),
    },
    register: {
      read: siteFormOf,
      check: siteDetails,
      create: async (details, session) => {
        const created = await sites.create({ ...details, ownerId: session.user.id })
        return { item: created.site, secret: created.secret }
      },
      refusal: (err) => `The ${err.message}; nothing was registered.`,
      refuse: (reply, session, input, status, error) => render(reply, status, session, { form: { ...input, ...(error === undefined ? {} : { error }) } }),
      auditView: siteView,
    },
    // The name, callback and home page. Sites are read from the store on every sign-in and exchange.
    edit: {
      read: siteFormOf,
      check: siteDetails,
      proofAsked: (details, site) => (details.callbackUrl !== site.callbackUrl ? 'Enter your current password to change the callback URL.' : null),
      update: (site, details) => sites.update(site.apiKey, details),
      refusal: (err) => `The ${err.message}.`,
      refuse: (reply, session, site, input, status, error) => render(reply, status, session, { edit: { ...input, apiKey: site.apiKey, error } }),
      auditView: siteView,
    },
    rotation: {
      words: (site) => ({ title: `New secret for ${site.name}?`, message: 'A new secret is made and shown once. The current one keeps working for as long as you choose below, and then stops: the site cannot sign anyone in until it is given the new one.', button: 'Make a new secret', cancel: siteKind.accountBase }),
      rotate: async (site, overlapSeconds) => (await sites.rotateSecret(site.apiKey, { overlapSeconds, now: o.now() })) ?? 'not_found',
      refuse: (reply, session, _site, why) => (why === 'overlap' ? render(reply, 400, session, { notice: 'Choose how long the old secret keeps working: none, 1 hour, 24 hours or 7 days. Nothing was changed.' }) : notOwned(reply, session)),
    },
    deletion: {
      words: (site) => ({ title: `Delete ${site.name}?`, message: 'The site is deleted: its api_key and secret stop working, and so does every sign-in it started. This cannot be undone.', button: 'Delete the site', cancel: siteKind.accountBase }),
      remove: async (site) => {
        const deleted = await sites.delete(site.apiKey)
        return deleted && siteView(deleted)
      },
    },
    showSecret: (_request, reply, session, site, shown) =>
      shown === null
        ? render(reply, 200, session, { created: { site, secret: null }, notice: shownOnceNotice('secret', 'Make a new one with “New secret…” below.') })
        : render(reply, 200, session, { created: { site, secret: shown.secret, ...(shown.previousUntil === undefined ? {} : { rotated: true, previousUntil: shown.previousUntil }) } }),
  })
}
