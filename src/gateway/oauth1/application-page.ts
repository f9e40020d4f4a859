// An OAuth application's page on the account area (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// its key, the secret the registration or rotation just made (once), its details with the
// edit form, the provider's endpoints, and the rotation and deletion buttons.
import type { Consumer } from '../store/types.js'
import { html, page, timeHtml } from '../account-area/html.js'
import { copyButton } from '../account-area/copy-secret.js'
import { csrfField, previousSecretSentence, type ShownSecret, type Viewer } from '../account-area/pages.js'
import { applicationEditSection } from './application-edit.js'

export function applicationPage(
  o: Viewer & {
    consumer: Consumer
    baseUrl: string
    /** The session's sign-in is not recent: the edit form asks for the current password. */
    askPassword: boolean
    notice?: string
    /** The secret made by the post this page answers; absent on a later visit. */
    shown?: ShownSecret
    /** Until when the secret a rotation replaced still works, when it still does. */
    previousUntil?: Date | null
  },
): string {
  const c = o.consumer
  const shown = o.shown
  return page({
    title: c.name,
    user: o.user,
    csrfToken: o.csrfToken,
    copySecret: true,
    body: html`<p><a href="/account">← Your account</a></p>
<div class="card">
<h1>${c.name}</h1>
${o.notice ? html`<div class="notice" role="status">${o.notice}</div>` : ''}
${shown ? html`<div class="warn" id="shown-once">Copy the consumer secret now: kigo shows it only this once.${shown.previousUntil === undefined ? '' : html` ${previousSecretSentence(shown.previousUntil)}`}</div>` : ''}
<dl>
<dt>Consumer key</dt><dd><code id="consumer_key">${c.key}</code>${copyButton('consumer_key', 'Copy the consumer key')}</dd>
<dt>Consumer secret</dt><dd>${shown
      ? html`<code class="secret" id="consumer_secret">${shown.secret}</code>${copyButton('consumer_secret', 'Copy the consumer secret')}`
      : html`<span class="muted" id="consumer_secret_hidden">Shown once, when it was made. Lost it? Make a new secret below.</span>${o.previousUntil ? html`<br><span class="muted" id="previous_secret">The secret it replaced keeps working until ${timeHtml(o.previousUntil.getTime())}.</span>` : ''}`}</dd>
<dt>Scopes</dt><dd>${c.scopes.join(', ')}</dd>
<dt>Callback URL</dt><dd>${c.callbackUrl ?? html`<span class="muted">none registered (any callback or “oob”)</span>`}</dd>
<dt>Registered</dt><dd>${timeHtml(c.createdAt, { dateOnly: true })}</dd>
</dl>
</div>
${applicationEditSection({ csrfToken: o.csrfToken, consumer: c, askPassword: o.askPassword })}
<div class="card">
<h2>Endpoints</h2>
<dl>
<dt>Request token</dt><dd><code>POST ${o.baseUrl}/oauth/initiate</code></dd>
<dt>Authorize</dt><dd><code>GET ${o.baseUrl}/oauth/authorize</code></dd>
<dt>Access token</dt><dd><code>POST ${o.baseUrl}/oauth/token</code></dd>
</dl>
<p class="muted">Keep the consumer secret private: anyone who has it can act as this application.</p>
</div>
<div class="card" id="oauth2">
<h2>OAuth 2.0</h2>
<p class="muted">The application can move to OAuth 2.0 and keep its name, scopes and users: it gets an OAuth 2.0 client, and exchanges each user's OAuth 1.0a token for OAuth 2.0 tokens without asking them again.</p>
<p><a href="/account/apps/${c.key}/oauth2">Turn on OAuth 2.0…</a></p>
</div>
<div class="card" id="manage">
<h2>Secret and deletion</h2>
<p class="muted">A new secret is shown once; you choose how long the current one keeps working beside it (not at all, an hour, a day or a week), time to give the application the new one. Deleting removes the application and every access it holds.</p>
<div class="actions">
<form method="post" action="/account/apps/${c.key}/rotate-secret">${csrfField(o.csrfToken)}<button type="submit" class="secondary">Make a new secret…</button></form>
<form method="post" action="/account/apps/${c.key}/delete">${csrfField(o.csrfToken)}<button type="submit" class="danger">Delete the application…</button></form>
</div>
</div>`,
  })
}
