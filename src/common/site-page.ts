// What every HTML page of kigo shares, on both sides (the core's public pages, the
// gateway's account, authorize, developer and migration pages, and the operator
// dashboard): one header, one stylesheet (stylesheet.ts, inline: the pages' CSP allows
// inline style and nothing else), one set of security headers, and the favicon. The
// markup itself is written with `html` (html.ts), which escapes every value.
import { html, trusted, type SafeHtml } from './html.js'
import { siteStylesheet } from './stylesheet.js'

export { html, joinHtml, SafeHtml, timeHtml, trusted } from './html.js'

export interface HeaderLink {
  href: string
  text: string
}

/** Where every public-facing page leads: the timeline, the developer guide, the migration schedule, sign-in. */
export const siteLinks: HeaderLink[] = [
  { href: '/developers', text: 'Developers' },
  { href: '/migration', text: 'Migration' },
]

/**
 * The header: the "kigo" brand (to `home`, the timeline unless told otherwise), the
 * links, and on the right `right` (the signed-in user and "Sign out"), or a "Sign in"
 * link to the account area unless `signIn` is false.
 */
export function siteHeader(o: { home?: string; links?: HeaderLink[]; right?: SafeHtml; signIn?: boolean; title?: string } = {}): SafeHtml {
  const links = (o.links ?? siteLinks).map((l) => html`<a href="${l.href}">${l.text}</a>`)
  const right = o.right ?? (o.signIn === false ? '' : html`<div class="who"><a class="signin" href="/account">Sign in</a></div>`)
  return html`<header class="site"><div class="bar"><a class="brand" href="${o.home ?? '/'}">kigo</a>${o.title ? html`<span class="where">${o.title}</span>` : ''}<nav class="site">${links}</nav>${right}</div></header>`
}

/** Whether a browser asks (a navigation sends Accept: text/html; an API client or an <img> does not). */
export function wantsPage(request: { headers: { accept?: string | undefined } }): boolean {
  const accept = request.headers.accept
  return typeof accept === 'string' && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept)
}

/** A whole page: the shared header and stylesheet around `body`. */
export function sitePage(o: { title: string; body: SafeHtml; header: SafeHtml; bodyClass?: string; mainClass?: string; head?: SafeHtml; tail?: SafeHtml }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · kigo</title>
${o.head}<style>${siteStyle}</style>
</head>
<body${o.bodyClass ? html` class="${o.bodyClass}"` : ''}>
${o.header}
<main${o.mainClass ? html` class="${o.mainClass}"` : ''}>
${o.body}
</main>
${o.tail}</body>
</html>
`.value
}

// Our own constant; its selectors' `>` must stay as written.
const siteStyle = trusted(siteStylesheet)

/** /favicon.ico: a 16×16 "k" in the header's colours (an ICO holding one PNG), served by both ports. */
export const favicon = Buffer.from(
  'AAABAAEAEBAAAAEAIAB1AAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgCAAAAkJFoNgAAADxJREFUeNpj0LYKJQkxkK/hPxgMhAY0cQIaMAXxacBqBE4NuFyIrgEZkOZpYm0g3w/khBKBeKB94iMSAQAN2xkO8cwI3AAAAABJRU5ErkJggg==',
  'base64',
)
