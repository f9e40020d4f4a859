// Server-side HTML for the authorize and account pages (docs/gateway.md#the-oauth-provider-and-the-account-pages): a tagged template
// that escapes every interpolated value unless it is already markup, the page layout of
// every kigo page (the shared header and stylesheet, src/common/site-page.ts), and the
// security headers every page carries.
import type { FastifyReply } from 'fastify'
import escapeHtml from 'escape-html'
import { siteHeader, sitePage } from '../../common/site-page.js'

/** Markup that has been built by `html` (its interpolations escaped) and is safe to embed. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

type Interpolation = SafeHtml | string | number | null | undefined | false | readonly Interpolation[]

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

/** `html\`<p>${text}</p>\`` — strings are escaped, SafeHtml and arrays of it are kept. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!
  return new SafeHtml(out)
}

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
  /** One inline script, allowed by the page's CSP nonce (sendPageWithScript). */
  script?: { nonce: string; code: string }
}

export function page(o: PageOptions): string {
  const who = o.user
    ? html`<div class="who"><span>${o.user.name} (${o.user.id})</span>
<a href="/account">Account</a>
<form method="post" action="/account/logout"><input type="hidden" name="csrf_token" value="${o.csrfToken ?? ''}"><button class="link" type="submit">Sign out</button></form></div>`.value
    : undefined
  return sitePage({
    title: o.title,
    head: '<meta name="referrer" content="no-referrer">\n',
    header: siteHeader(who === undefined ? {} : { right: who }),
    mainClass: o.narrow ? 'narrow' : o.wide ? 'wide' : '',
    body: o.body.value,
    tail: o.script ? html`<script nonce="${o.script.nonce}">${new SafeHtml(o.script.code)}</script>\n`.value : '',
  })
}

/**
 * Headers of every page: nothing but inline styles may load, forms post only to this
 * origin (and, where a form's answer redirects to a client's callback, to that origin:
 * browsers apply form-action to the redirect too), no framing, no Referer (the URLs carry
 * request tokens), never cached.
 */
export function pageHeaders(reply: FastifyReply, formActionOrigins: string[] = []): FastifyReply {
  const formAction = ["'self'", ...formActionOrigins].join(' ')
  return reply
    .header('content-security-policy', `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
}

/** Sends a page with its status and headers. */
export function sendPage(reply: FastifyReply, status: number, document: string, formActionOrigins: string[] = []): FastifyReply {
  return pageHeaders(reply, formActionOrigins).code(status).type('text/html; charset=utf-8').send(document)
}

/** A 303 redirect (after a form post, the browser follows with GET). */
export function seeOther(reply: FastifyReply, location: string, formActionOrigins: string[] = []): FastifyReply {
  return pageHeaders(reply, formActionOrigins).code(303).header('location', location).send()
}
