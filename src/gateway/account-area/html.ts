// The gateway's page layout (docs/gateway.md#the-oauth-provider-and-the-account-pages):
// the shared header with the signed-in user, the shared stylesheet and security headers
// (src/common/site-page.ts), and how a page or a redirect after a post is sent. The
// markup is written with `html` (src/common/html.ts), which escapes every value.
import type { FastifyReply } from 'fastify'
import { html, trusted, type SafeHtml } from '../../common/html.js'
import { siteHeader, sitePage } from '../../common/site-page.js'
import { securePage } from '../../common/security-headers.js'
import { copySecretScript, copySecretScriptHash } from './copy-secret.js'

export { html, SafeHtml, timeHtml, trusted } from '../../common/html.js'

/** The two buttons of every consent page (OAuth, the login API, OpenID Connect): one field, `decision`. */
export const allowOrDenyButtons: SafeHtml = html`<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>`

export interface PageOptions {
  title: string
  body: SafeHtml
  /** The signed-in user, shown in the header with a sign-out button. */
  user?: { id: string; name: string } | null
  csrfToken?: string
  /** A narrow column (login, consent). */
  narrow?: boolean
  /** A wide column (the developer guide's code). */
  wide?: boolean
  /** One inline script of our own, allowed by the page's CSP nonce (sendPageWithScript). */
  script?: { nonce: string; code: string }
  /** The page shows a secret once, with copy buttons (copy-secret.ts): send it with sendSecretPage. */
  copySecret?: boolean
}

export function page(o: PageOptions): string {
  const who = o.user
    ? html`<div class="who"><span>${o.user.name} (${o.user.id})</span>
<a href="/account">Account</a>
<form method="post" action="/account/logout"><input type="hidden" name="csrf_token" value="${o.csrfToken ?? ''}"><button class="link" type="submit">Sign out</button></form></div>`
    : undefined
  return sitePage({
    title: o.title,
    head: html`<meta name="referrer" content="no-referrer">\n`,
    header: siteHeader(who === undefined ? {} : { right: who }),
    mainClass: o.narrow ? 'narrow' : o.wide ? 'wide' : '',
    body: o.body,
    tail: o.script
      ? html`<script nonce="${o.script.nonce}">${trusted(o.script.code)}</script>\n`
      : o.copySecret
        ? html`<script>${trusted(copySecretScript)}</script>\n`
        : undefined,
  })
}

/**
 * Headers of every gateway page: forms post only to this origin (and, where a form's
 * answer redirects to a client's callback, to that origin: browsers apply form-action to
 * the redirect too), no Referer (the URLs carry request tokens), never cached.
 */
export function pageHeaders(reply: FastifyReply, formActionOrigins: string[] = []): FastifyReply {
  return securePage(reply, { formAction: formActionOrigins })
}

/** Sends a page with its status and headers. */
export function sendPage(reply: FastifyReply, status: number, document: string, formActionOrigins: string[] = []): FastifyReply {
  return pageHeaders(reply, formActionOrigins).code(status).type('text/html; charset=utf-8').send(document)
}

/** Sends a page that shows a secret once (page's copySecret): its copy script is allowed by its hash, nothing else. */
export function sendSecretPage(reply: FastifyReply, status: number, document: string): FastifyReply {
  return securePage(reply, { formAction: [], scriptHashes: [copySecretScriptHash] }).code(status).type('text/html; charset=utf-8').send(document)
}

/** A 303 redirect (after a form post, the browser follows with GET). */
export function seeOther(reply: FastifyReply, location: string, formActionOrigins: string[] = []): FastifyReply {
  return pageHeaders(reply, formActionOrigins).code(303).header('location', location).send()
}
