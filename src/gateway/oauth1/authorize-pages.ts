// The pages of the OAuth authorize step (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// consent, the out-of-band verifier and a denial, on the account area's layout.
import type { Scope } from '../domain/identifiers.js'
import { html } from '../../common/html.js'
import { allowOrDenyButtons, page } from '../account-area/html.js'
import { csrfField, scopeList, type Viewer } from '../account-area/pages.js'
import { registrantLine, type Registrant } from '../account-area/registrant.js'

export function consentPage(o: Viewer & { appName: string; scopes: Scope[]; token: string; redirectsTo: string | null; registrant?: Registrant }): string {
  return page({
    title: `Authorize ${o.appName}`,
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
<h1>Allow <strong>${o.appName}</strong> to use your kigo account?</h1>
${o.registrant ? registrantLine(o.registrant) : ''}
<p>${o.appName} asks to:</p>
${scopeList(o.scopes)}
<p class="muted">You are signed in as ${o.user.name} (${o.user.id}). ${
      o.redirectsTo ? html`After you choose, you will be sent back to ${o.redirectsTo}.` : html`After you allow, you will get a code to enter in the application.`
    } You can revoke access at any time on your account page.</p>
<form method="post" action="/oauth/authorize">
${csrfField(o.csrfToken)}
<input type="hidden" name="oauth_token" value="${o.token}">
${allowOrDenyButtons}
</form>
</div>`,
  })
}

export function verifierPage(o: Viewer & { appName: string; verifier: string }): string {
  return page({
    title: 'Access allowed',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
<h1>You allowed ${o.appName}</h1>
<p>Enter this code in ${o.appName} to finish:</p>
<code class="verifier" id="oauth_verifier" title="Click to select the code">${o.verifier}</code>
<p class="muted">One click selects the whole code. Capitals or small letters both work; it has no 0, O, 1, I or L to confuse. The code works once and only for a few minutes.</p>
</div>`,
  })
}

export function deniedPage(o: Viewer & { appName: string }): string {
  return page({
    title: 'Access denied',
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
<h1>You denied ${o.appName}</h1>
<p>${o.appName} was not given access to your account. You can close this page.</p>
</div>`,
  })
}
