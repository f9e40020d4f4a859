// The OpenID Connect pages in the account area's layout (src/gateway/account-area/html.ts):
// the consent page, and the account page's list of sites the user signed in to.
import { html, timeHtml, type SafeHtml } from '../../common/html.js'
import { allowOrDenyButtons, page } from '../account-area/html.js'
import { registrantLine, type Registrant } from '../account-area/registrant.js'
import type { User } from '../store/types.js'
import type { SignedInSite } from './store.js'
import { scopeDescriptions } from '../domain/scopes.js'

// The API's scopes (OAuth 2.0) in the words OAuth 1.0a's authorize page uses.
const scopeText: Record<string, string> = {
  openid: 'Know your kigo user ID',
  profile: 'See your display name, your icon and your profile page',
  offline_access: 'Keep this access when you are not using the site',
  ...scopeDescriptions,
}

const csrfField = (token: string) => html`<input type="hidden" name="csrf_token" value="${token}">`

export function oidcConsentPage(o: { user: User; csrfToken: string; uid: string; clientName: string; redirectsTo: string | null; scopes: string[]; registrant?: Registrant }): string {
  return page({
    title: `Sign in to ${o.clientName}`,
    narrow: true,
    user: o.user,
    csrfToken: o.csrfToken,
    body: html`<div class="card">
<h1>Sign in to <strong>${o.clientName}</strong> with your kigo account?</h1>
${o.registrant ? registrantLine(o.registrant) : ''}
<p>${o.clientName} asks to:</p>
<ul class="scopes">${o.scopes.map((s) => html`<li>${scopeText[s] ?? s} <span class="muted">(${s})</span></li>`)}</ul>
<p class="muted">You are signed in as ${o.user.name} (${o.user.id}). ${o.redirectsTo === null ? 'After you choose, go back to your device.' : html`After you choose, you will be sent back to ${o.redirectsTo}.`} You can revoke the site's access at any time on your account page.</p>
<form method="post" action="/oidc/interaction/${o.uid}/confirm">
${csrfField(o.csrfToken)}
${allowOrDenyButtons}
</form>
</div>`,
  })
}


/** The account page's section: sites signed in to with kigo (OpenID Connect), each revocable. */
export function signedInSitesSection(o: { csrfToken: string; sites: SignedInSite[] }): SafeHtml {
  return html`<section class="card" id="oidc-sites">
<h2>Sites you sign in to with kigo</h2>
${o.sites.length === 0
    ? html`<p class="muted">You have not signed in to any site with your kigo account.</p>`
    : html`<table class="cards">
<thead><tr><th>Site</th><th>Access</th><th>Since</th><th></th></tr></thead>
<tbody>${o.sites.map((s) => html`<tr>
<td data-label="Site">${s.client.name}<br><span class="muted">${s.client.redirectUris.map((u) => originText(u)).filter((v, i, a) => a.indexOf(v) === i).join(', ')}</span></td>
<td data-label="Access"><ul class="scopes">${s.scopes.map((sc) => html`<li>${scopeText[sc] ?? sc}</li>`)}</ul></td>
<td data-label="Since" class="nowrap">${timeHtml(s.grantedAt, { dateOnly: true })}</td>
<td class="row-actions"><form method="post" action="/account/oidc-sites/revoke">${csrfField(o.csrfToken)}<input type="hidden" name="client_id" value="${s.client.clientId}"><button type="submit" class="danger">Revoke…</button></form></td>
</tr>`)}</tbody>
</table>
<p class="muted">Revoking ends the site's access at once; the next time you sign in there, kigo asks you again.</p>`}
</section>`
}

function originText(uri: string): string {
  try {
    return new URL(uri).host
  } catch {
    return uri
  }
}
