// The account area's pages (docs/gateway.md#the-oauth-provider-and-the-account-pages): sign-in,
// forgot and reset, messages, confirmations, the account page,
// as plain server-side HTML: every form posts with a CSRF token, nothing needs JavaScript.
import type { User } from '../store/types.js'
import type { Scope } from '../domain/identifiers.js'
import { html, page, timeHtml, type SafeHtml } from './html.js'
import { datesHtml } from '../../common/html.js'
import { scopeDescriptions } from '../domain/scopes.js'
import type { LegacyClientView } from './legacy-usage.js'
import { minLoginPasswordLength } from '../../common/password-rule.js'
import { defaultOverlapSeconds, overlapChoices } from '../domain/secret-rotation.js'

/** A signed-in viewer of a page: the header's sign-out form needs the session's CSRF token. */
export type Viewer = { user: User; csrfToken: string }

/** The hidden CSRF field of a form posted by a session with `token`. */
export const csrfField = (token: string) => html`<input type="hidden" name="csrf_token" value="${token}">`

/** The scopes as a list the user reads. */
export const scopeList = (scopes: Scope[]) => html`<ul class="scopes">${scopes.map((s) => html`<li>${scopeDescriptions[s]} <span class="muted">(${s})</span></li>`)}</ul>`

export function loginPage(o: { csrfToken: string; next: string; username?: string; error?: string; notice?: string; context?: string }): string {
  return page({
    title: 'Sign in',
    narrow: true,
    body: html`<div class="card">
<h1>Sign in to kigo</h1>
${o.context ? html`<p class="muted">${o.context}</p>` : ''}
${o.notice ? html`<div class="notice">${o.notice}</div>` : ''}
${o.error ? html`<div class="error" role="alert">${o.error}</div>` : ''}
<form method="post" action="/account/login">
${csrfField(o.csrfToken)}
<input type="hidden" name="next" value="${o.next}">
<label for="username">User ID</label>
<input type="text" id="username" name="username" value="${o.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<label for="password">Sign-in password</label>
<input type="password" id="password" name="password" autocomplete="current-password" aria-describedby="password-hint" required>
<p class="muted" id="password-hint">The password you sign in to this site with, not the API password that older tools (WSSE or Basic) use.</p>
<div class="actions"><button type="submit">Sign in</button></div>
</form>
<p class="muted"><a href="/account/forgot">Forgot your password?</a></p>
</div>`,
  })
}

/** With a mail server: the user ID, and a link is mailed to the account's contact e-mail. */
export function forgotByMailPage(o: { csrfToken: string; sent?: { minutes: number }; error?: string }): string {
  return page({
    title: 'Forgot your password?',
    narrow: true,
    body: html`<div class="card" id="forgot">
<h1>Forgot your password?</h1>
${o.error ? html`<div class="error" role="alert">${o.error}</div>` : ''}
${o.sent
      ? html`<div class="notice" role="status">If that account has a contact e-mail, a link to set a new password is on its way. It works once, within ${o.sent.minutes} minutes.</div>`
      : html`<p>Enter your user ID: a link to set a new password is mailed to your account's contact e-mail. If your account has none, ask the operator of this service.</p>
<form method="post" action="/account/forgot">
${csrfField(o.csrfToken)}
<label for="username">User ID</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus>
<div class="actions"><button type="submit">Mail me a link</button></div>
</form>`}
<p><a href="/account/login">Back to sign-in</a></p>
</div>`,
  })
}

/** The mailed link's page: a new password, twice. */
export function resetPasswordPage(o: { csrfToken: string; token: string; error?: string }): string {
  return page({
    title: 'Set a new password',
    narrow: true,
    body: html`<div class="card" id="reset">
<h1>Set a new password</h1>
${o.error ? html`<div class="error" role="alert">${o.error}</div>` : ''}
<form method="post" action="/account/reset">
${csrfField(o.csrfToken)}
<input type="hidden" name="token" value="${o.token}">
<label for="new_password">New password <span class="muted">(at least ${minLoginPasswordLength} characters, not containing your user ID)</span></label>
<input type="password" id="new_password" name="new_password" autocomplete="new-password" minlength="${minLoginPasswordLength}" required>
<label for="confirm_password">New password again</label>
<input type="password" id="confirm_password" name="confirm_password" autocomplete="new-password" minlength="${minLoginPasswordLength}" required>
<div class="actions"><button type="submit">Set the password</button></div>
</form>
</div>`,
  })
}

/** Without a mail server to send a reset link, the operator resets the password (the page names no command: the user cannot run it). */
export function forgotPasswordPage(): string {
  return page({
    title: 'Forgot your password?',
    narrow: true,
    body: html`<div class="card" id="forgot">
<h1>Forgot your password?</h1>
<p>This service does not send mail. To get a new password, ask the operator of this service: they can give you one. Sign in with it and change it under “Sign-in password” on your account page. Your API password (for WSSE and Basic clients) and the applications you authorized stay as they are.</p>
<p><a href="/account/login">Back to sign-in</a></p>
</div>`,
  })
}

export function messagePage(o: { title: string; message: string; user?: User | null; csrfToken?: string; link?: { href: string; text: string } }): string {
  return page({
    title: o.title,
    narrow: true,
    user: o.user ?? null,
    ...(o.csrfToken ? { csrfToken: o.csrfToken } : {}),
    body: html`<div class="card">
<h1>${o.title}</h1>
<p>${o.message}</p>
${o.link ? html`<p><a href="${o.link.href}">${o.link.text}</a></p>` : ''}
</div>`,
  })
}

/** A choice a confirmation asks for (a select), posted with the confirmed form. */
export interface FormChoice {
  name: string
  label: string
  options: ReadonlyArray<{ value: string; label: string }>
  selected?: string
}

/** The select of a FormChoice, with its label. */
const choiceField = (c: FormChoice): SafeHtml => html`<label for="choice_${c.name}">${c.label}</label>
<select id="choice_${c.name}" name="${c.name}">${c.options.map((o) => html`<option value="${o.value}"${o.value === c.selected ? html` selected` : ''}>${o.label}</option>`)}</select>`

/** How long the secret being replaced keeps working (docs/gateway.md#rotating-a-secret): the form field `overlap`, in seconds. */
export const overlapChoice: FormChoice = {
  name: 'overlap',
  label: 'How long the current secret keeps working beside the new one',
  options: overlapChoices.map((c) => ({ value: String(c.seconds), label: c.label })),
  selected: String(defaultOverlapSeconds),
}

/** A step before what cannot be undone: the question, and a button that posts the same form with confirm=yes (and the choice asked, if any). */
export function confirmPage(o: Viewer & { action: string; title: string; message: string; button: string; fields?: Record<string, string>; choice?: FormChoice; cancel?: string }): string {
  return page({
    title: o.title,
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card" id="confirm">
<h1>${o.title}</h1>
<p>${o.message}</p>
<form method="post" action="${o.action}">
${csrfField(o.csrfToken)}
${Object.entries(o.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
${o.choice ? choiceField(o.choice) : ''}
<input type="hidden" name="confirm" value="yes">
<div class="actions"><button type="submit" class="danger">${o.button}</button><a class="button secondary" href="${o.cancel ?? '/account'}">Cancel</a></div>
</form>
</div>`,
  })
}

export function accountPage(
  o: Viewer & {
    apiPassword: string
    notice?: string
    /** The user's clients still on WSSE or Basic; null when the gateway has no usage report. */
    legacy?: LegacyClientView[] | null
    passwordError?: string
    /** The contact e-mail: migration notices and reset links go there; the operator sees it beside the user's legacy usage. */
    email?: string | null
    /** A new address waiting for its owner to open the link mailed to it. */
    emailPending?: { email: string; expiresAt: Date } | null
    /** Whether this service mails (a new address can be confirmed). */
    emailByMail?: boolean
    /** The sections the features add at the top (what has access to the account) and below the contact e-mail (context.ts, AccountSection), in the features' order. */
    topSections?: SafeHtml[]
    sections?: SafeHtml[]
    /** Where the login API stands (legacy-usage.ts loginApiStanding); absent without a policy. */
    loginApi?: { retiring: boolean; text: string }
  },
): string {
  const legacy =
    o.legacy === undefined || o.legacy === null
      ? ''
      : html`<section class="card" id="legacy">
<h2>Tools and sites still using retired sign-ins</h2>
${o.legacy.length === 0
          ? html`<p class="muted">None of your tools has used WSSE or HTTP Basic, and no site has signed you in with the login API, recently. Nothing to do.</p>`
          : html`<p class="muted">These clients sign in with your API password (WSSE or HTTP Basic), or sign you in to their site with the login API; these are being retired. Each needs an update to OAuth (or OpenID Connect, for a site) from its developer, or a replacement.</p>
<table class="cards">
<thead><tr><th>Client</th><th>Method</th><th>Last seen</th><th>What will happen</th></tr></thead>
<tbody>${o.legacy.map((l) => html`<tr class="${l.refusedNow ? 'refused' : l.movedAs !== null ? 'moved' : ''}">
<td data-label="Client"><strong>${l.client}</strong></td>
<td data-label="Method">${l.methodName}</td>
<td data-label="Last seen">${timeHtml(l.lastSeen)}</td>
<td data-label="What will happen">${datesHtml(l.fate)}</td>
</tr>`)}</tbody>
</table>
<p><a href="/account/moving">How to move your tools</a> · <a href="/developers#tell-your-developer">What to tell the client's developer</a> · <a href="/migration">the migration schedule</a></p>`}
</section>`

  return page({
    title: 'Your account',
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<h1>Your account</h1>
${o.notice ? html`<div class="notice" role="status">${o.notice}</div>` : ''}
${legacy}
${o.topSections ?? []}

<section class="card" id="api-password">
<h2>API password</h2>
<p class="muted">Older clients that sign in with HTTP Basic or WSSE use this password instead of OAuth. It is not your login password.</p>
<details><summary>Show API password</summary><p><code class="secret" id="api_password">${o.apiPassword}</code></p></details>
<form method="post" action="/account/api-password">
${csrfField(o.csrfToken)}
<div class="actions"><button type="submit" class="secondary">Reset API password…</button></div>
</form>
<p class="muted">Resetting makes the old password stop working at once.</p>
</section>

<section class="card" id="password">
<h2>Sign-in password</h2>
${o.passwordError ? html`<div class="error" role="alert">${o.passwordError}</div>` : ''}
<form method="post" action="/account/password">
${csrfField(o.csrfToken)}
<input type="text" name="username" value="${o.user.id}" autocomplete="username" hidden>
<label for="current_password">Current password</label>
<input type="password" id="current_password" name="current_password" autocomplete="current-password" required>
<label for="new_password">New password <span class="muted">(at least ${minLoginPasswordLength} characters, not containing your user ID)</span></label>
<input type="password" id="new_password" name="new_password" autocomplete="new-password" minlength="${minLoginPasswordLength}" required>
<label for="confirm_password">New password again</label>
<input type="password" id="confirm_password" name="confirm_password" autocomplete="new-password" minlength="${minLoginPasswordLength}" required>
<div class="actions"><button type="submit">Change password</button></div>
</form>
<p class="muted">Changing it signs you out everywhere else. It does not change the API password above.</p>
</section>

<section class="card" id="contact">
<h2>Contact e-mail</h2>
<p class="muted">Optional. This address receives migration notices (when a tool of yours must move to a newer way of signing in) and password-reset links. ${o.emailByMail === false ? 'This service sends no mail: to set a new address, ask the operator of this service. Leave empty to remove it.' : 'A new address is used once you open the link we mail to it. Leave empty to remove it.'}</p>
${o.emailPending ? html`<p class="notice" role="status">Waiting for confirmation: <strong>${o.emailPending.email}</strong>. Open the link we mailed there (it works until ${timeHtml(o.emailPending.expiresAt.getTime())}); until then ${o.email ? html`<strong>${o.email}</strong> stays in use` : 'no address is in use'}.</p>` : ''}
<form method="post" action="/account/email">
${csrfField(o.csrfToken)}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" maxlength="254" autocomplete="email" value="${o.email ?? ''}">
<label for="email_current_password">Current password <span class="muted">(needed to change or remove the address)</span></label>
<input type="password" id="email_current_password" name="current_password" autocomplete="current-password">
<div class="actions"><button type="submit" class="secondary">Save</button></div>
</form>
</section>

${o.sections ?? []}
<section class="card" id="login-sites">
<h2>Login sites</h2>
<p class="muted">Sites that ${o.loginApi?.retiring ? 'still ' : ''}sign people in with the login API: <a href="/account/sites">register or manage yours</a>.${o.loginApi ? html` ${datesHtml(o.loginApi.text)}` : ''}</p>
</section>

<section class="card" id="oidc-clients">
<h2>OpenID Connect clients</h2>
<p class="muted">Sites and apps that sign people in with kigo through OpenID Connect: <a href="/account/oidc-clients">register or manage yours</a>.</p>
</section>`,
  })
}

/** What the secret's row of a page shows once a secret was made or replaced (docs/gateway.md#rotating-a-secret). */
export interface ShownSecret {
  /** The new secret: shown only on the answer to the registration or rotation that made it. */
  secret: string
  /** After a rotation: until when the replaced secret keeps working (null: it stopped at once). */
  previousUntil?: Date | null
}

/**
 * What the page a registration or rotation redirected to says when it is opened again (a
 * reload): the secret was shown once and is gone; `remedy` says how to make a new one.
 */
export const shownOnceNotice = (what: string, remedy: string): string =>
  `The ${what} was shown once, on the page after it was made, and kigo does not show it again. Lost it? ${remedy}`

/** The sentence on the replaced secret, after a rotation. */
export const previousSecretSentence = (previousUntil: Date | null): SafeHtml =>
  previousUntil === null
    ? html`The secret it replaced stopped working at once.`
    : html`The secret it replaced keeps working until ${timeHtml(previousUntil.getTime())}; then only the new one works.`
