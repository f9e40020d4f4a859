// OAuth 1.0a's part of the account page (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// at the top, the applications holding access to the account (with when each last acted,
// and, while OAuth 1.0a is being retired, what that means for it), each revocable; below,
// the user's own applications and the form that registers one, or, while the oauth1 policy
// has closed registration (docs/gateway.md#oauth-10a-as-a-legacy-method), why not and what
// to use instead. A registration refused (no name, no scope, a bad callback) answers with
// the account page again, this section showing the form as it was posted and why: the
// applications' pages get the account area with that answer (`applicationsKit`).
import type { FastifyReply } from 'fastify'
import { datesHtml, html, timeHtml, type SafeHtml } from '../../common/html.js'
import type { AccountSection } from '../account-area/context.js'
import type { AccountPages } from '../account-area/facade.js'
import { csrfField, scopeList } from '../account-area/pages.js'
import type { SignedInSession } from '../account-area/posted-form.js'
import { scopes as allScopes, type Scope } from '../domain/identifiers.js'
import { scopeDescriptions } from '../domain/scopes.js'
import { oauth1Standing } from '../policy/oauth1-standing.js'
import { oauth2GuidePath, registrationClosedText } from '../policy/registration.js'
import type { MethodPolicy } from '../policy/types.js'
import type { AuthorizedApplication, Consumer } from '../store/types.js'

/** The registration form as shown: empty, or as posted with why it was refused. */
export interface RegisterForm {
  name: string
  callback: string
  /** The optional home page, linked on the consent page. */
  home: string
  scopes: Scope[]
  error?: string
}

/** The empty registration form of the account page. */
const emptyRegisterForm: RegisterForm = { name: '', callback: '', home: '', scopes: ['read_public'] }

/** The account page's OAuth 1.0a section: the section itself, and its rendering with a form as posted. */
export interface ApplicationsSection {
  section: AccountSection
  render(user: { id: string }, csrfToken: string, form: RegisterForm): Promise<SafeHtml>
}

export function applicationsSection(o: { listConsumers(ownerId: string): Promise<Consumer[]>; registrationClosed(): boolean }): ApplicationsSection {
  const render = async (user: { id: string }, csrfToken: string, form: RegisterForm) =>
    applicationsHtml({ csrfToken, registered: await o.listConsumers(user.id), form, ...(o.registrationClosed() ? { closed: registrationClosedText } : {}) })
  return { section: (user, csrfToken) => render(user, csrfToken, emptyRegisterForm), render }
}

/** The applications holding access to the user's account, each with a button that revokes it (application-pages.ts). */
export function authorizedSection(o: {
  listAuthorizedApplications(userId: string): Promise<AuthorizedApplication[]>
  /** When each application last acted for the user, by consumer key (usage/app-use.ts). */
  lastUsed(userId: string): Promise<Map<string, number>>
  /** The oauth1 policy in force: while OAuth 1.0a is being retired, each application says so (policy/oauth1-standing.ts). */
  policy(): MethodPolicy
  now: () => number
}): AccountSection {
  return async (user, csrfToken) => {
    const [authorized, lastUsed] = await Promise.all([o.listAuthorizedApplications(user.id), o.lastUsed(user.id)])
    const retiring = oauth1Standing(o.policy(), o.now(), user.id)
    return authorizedHtml(csrfToken, authorized.map((a) => ({ ...a, lastUsedAt: lastUsed.get(a.consumer.key) ?? null, retiring: retiring?.(a.consumer.key) ?? null })))
  }
}

/** `retiring`: what the user is told while OAuth 1.0a, which the application uses, is being retired. */
function authorizedHtml(csrfToken: string, authorized: Array<AuthorizedApplication & { lastUsedAt: number | null; retiring: string | null }>): SafeHtml {
  const list =
    authorized.length === 0
      ? html`<p class="muted">No application has access to your account.</p>`
      : html`<table class="cards">
<thead><tr><th>Application</th><th>Access</th><th>Since</th><th>Last used</th><th></th></tr></thead>
<tbody>${authorized.map(
          (a) => html`<tr>
<td data-label="Application">${a.consumer.name}${a.retiring ? html`<p class="retiring">${datesHtml(a.retiring)}</p>` : ''}</td>
<td data-label="Access">${scopeList(a.scopes)}</td>
<td data-label="Since">${timeHtml(a.authorizedAt, { dateOnly: true })}</td>
<td class="last-used" data-label="Last used">${a.lastUsedAt === null ? html`<span class="muted">not yet</span>` : timeHtml(a.lastUsedAt)}</td>
<td><form method="post" action="/account/revoke">${csrfField(csrfToken)}<input type="hidden" name="consumer_key" value="${a.consumer.key}"><button type="submit" class="danger">Revoke…</button></form></td>
</tr>`,
        )}</tbody>
</table>`
  return html`<section class="card" id="authorized">
<h2>Applications with access to your account</h2>
${list}
</section>`
}

/** The account area as the applications' pages use it: the account page answered with the registration form as posted. */
export type AccountKit = Omit<AccountPages, 'renderAccount'> & {
  renderAccount(reply: FastifyReply, status: number, session: SignedInSession, form: RegisterForm): Promise<FastifyReply>
}

export function applicationsKit(area: AccountPages, applications: ApplicationsSection): AccountKit {
  return {
    ...area,
    renderAccount: async (reply, status, session, form) =>
      area.renderAccount(reply, status, session, { replaced: { section: applications.section, html: await applications.render(session.user, session.csrfToken, form) } }),
  }
}

const checked = (on: boolean): SafeHtml => (on ? html` checked` : html``)

/** `closed`: why no new application can be registered, shown in place of the form. */
function applicationsHtml(o: { csrfToken: string; registered: Consumer[]; form: RegisterForm; closed?: string }): SafeHtml {
  const f = o.form
  const registered =
    o.registered.length === 0
      ? html`<p class="muted">You have not registered an application.</p>`
      : html`<table class="cards">
<thead><tr><th>Name</th><th>Consumer key</th><th>Scopes</th></tr></thead>
<tbody>${o.registered.map(
          (c) => html`<tr><td data-label="Name"><a href="/account/apps/${c.key}">${c.name}</a></td><td data-label="Consumer key"><code>${c.key}</code></td><td data-label="Scopes">${c.scopes.join(', ')}</td></tr>`,
        )}</tbody>
</table>`
  return html`<section class="card" id="applications">
<h2>Your applications</h2>
${registered}
</section>

<section class="card" id="register">
<h2>Register an application</h2>
${o.closed !== undefined ? html`<p class="notice" role="status" id="registration-closed">${o.closed} <a href="${oauth2GuidePath}">How to use OAuth 2.0</a></p>` : html`${f.error ? html`<div class="error" role="alert">${f.error}</div>` : ''}
<form method="post" action="/account/apps">
${csrfField(o.csrfToken)}
<label for="app_name">Name</label>
<input type="text" id="app_name" name="name" value="${f.name}" maxlength="100" required>
<label for="app_callback">Callback URL <span class="muted">(optional; leave empty to accept any callback or “oob”)</span></label>
<input type="url" id="app_callback" name="callback" value="${f.callback}" placeholder="https://example.com/oauth/callback">
<label for="app_home">Home page <span class="muted">(optional; linked on the page where people authorize the application)</span></label>
<input type="url" id="app_home" name="home_url" value="${f.home}" placeholder="https://example.com/">
<label>Scopes</label>
${allScopes.map(
      (s) => html`<label class="check"><input type="checkbox" name="scope" value="${s}"${checked(f.scopes.includes(s))}> <span>${scopeDescriptions[s]} <span class="muted">(${s})</span></span></label>`,
    )}
<div class="actions"><button type="submit">Register</button></div>
</form>`}
</section>`
}
