// The login API's pages (docs/login-api.md#sign-in): the consent page naming the site,
// the page after Deny, and the refusals, in the account area's layout.
import { html, type SafeHtml } from '../../common/html.js'
import { allowOrDenyButtons, messagePage, page, registrantLine, type Registrant, type Session, type User } from '../account-area/index.js'

export function siteConsentPage(o: { user: User; session: Session; csrf: SafeHtml; siteName: string; siteHost: string; query: string; notice?: string | null; registrant?: Registrant }): string {
  return page({
    title: `Sign in to ${o.siteName}`,
    narrow: true,
    user: o.user,
    csrfToken: o.session.csrfToken,
    body: html`<div class="card">
<h1>Sign in to <strong>${o.siteName}</strong> with kigo?</h1>
${o.registrant ? registrantLine(o.registrant) : ''}
${o.notice ? html`<div class="warn" role="status" id="deprecation">${o.notice}</div>` : ''}
<p>${o.siteName} (${o.siteHost}) asks to know who you are: your user ID <strong>${o.user.id}</strong> and your icon. It gets nothing else and cannot post for you.</p>
<form method="post" action="/auth">
${o.csrf}
<input type="hidden" name="request" value="${o.query}">
${allowOrDenyButtons}
</form>
</div>`,
  })
}

export function siteDeniedPage(o: { user: User; session: Session; siteName: string; siteUrl: string }): string {
  return messagePage({
    user: o.user,
    csrfToken: o.session.csrfToken,
    title: 'Sign-in denied',
    message: `You did not sign in to ${o.siteName}; it was told nothing about you.`,
    link: { href: o.siteUrl, text: `Back to ${o.siteName}` },
  })
}

export function signInProblemPage(title: string, message: string, link?: { href: string; text: string }): string {
  return messagePage({ title, message, ...(link ? { link } : {}) })
}
