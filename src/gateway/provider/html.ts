// Server-side HTML for the authorize and account pages (SPEC §5): a tagged template
// that escapes every interpolated value unless it is already markup, one page layout
// with a small inline stylesheet, and the security headers every page carries.
import type { FastifyReply } from 'fastify'
import escapeHtml from 'escape-html'

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

const stylesheet = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f4f5f7}
header{background:#2b3a55;color:#fff}
header .bar{max-width:760px;margin:0 auto;padding:.7rem 1.2rem;display:flex;align-items:center;justify-content:space-between;gap:1rem}
header a.brand{color:#fff;font-weight:700;font-size:1.2rem;text-decoration:none;letter-spacing:.02em}
header nav.site{flex:1;display:flex;gap:1rem;font-size:.9rem}
header nav.site a{color:#dfe6f3;text-decoration:none}
tr.refused td{background:#fdecea}
header .who{font-size:.9rem;display:flex;align-items:center;gap:.8rem}
header .who form{margin:0}
header button.link{background:none;border:1px solid #8fa0c0;color:#fff;padding:.2rem .7rem;border-radius:4px;cursor:pointer;font:inherit}
main{max-width:760px;margin:1.5rem auto;padding:0 1.2rem}
main.narrow{max-width:440px}
main.wide{max-width:980px}
.card{background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:1.3rem 1.5rem;margin-bottom:1.2rem}
h1{font-size:1.4rem;margin:0 0 1rem}
h2{font-size:1.1rem;margin:0 0 .8rem}
p{margin:.5rem 0}
.muted{color:#59636e;font-size:.9rem}
label{display:block;font-weight:600;margin:.8rem 0 .3rem}
label.check{font-weight:400;margin:.3rem 0;display:flex;gap:.5rem;align-items:baseline}
input[type=text],input[type=password],input[type=url],textarea{width:100%;padding:.5rem .6rem;border:1px solid #b9c0ca;border-radius:5px;font:inherit}
button{font:inherit;padding:.5rem 1.1rem;border-radius:5px;border:1px solid #2b3a55;background:#2b3a55;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#2b3a55}
button.danger{background:#fff;color:#b42318;border-color:#b42318}
.actions{display:flex;gap:.8rem;margin-top:1.2rem}
.error{background:#fdecea;border:1px solid #f5c2bd;color:#8a1c12;border-radius:5px;padding:.6rem .8rem;margin:.5rem 0 1rem}
.notice{background:#e8f3ec;border:1px solid #b7dcc4;color:#1a5c32;border-radius:5px;padding:.6rem .8rem;margin:.5rem 0 1rem}
ul.scopes{padding-left:1.2rem;margin:.5rem 0}
ul.scopes li{margin:.3rem 0}
code,.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem;background:#f0f2f5;padding:.1rem .35rem;border-radius:4px;word-break:break-all}
.verifier{font-size:2.6rem;font-weight:700;letter-spacing:.18em;display:block;text-align:center;padding:.9rem .5rem;margin:1rem 0;word-break:normal;white-space:nowrap;overflow-x:auto;user-select:all;-webkit-user-select:all;cursor:text;border:2px dashed #8fa0c0}
.nowrap{white-space:nowrap}
table{width:100%;border-collapse:collapse;font-size:.95rem}
th,td{text-align:left;padding:.45rem .4rem;border-bottom:1px solid #e4e7ec;vertical-align:top}
th{font-weight:600;color:#59636e;font-size:.85rem}
td form{margin:0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem;margin:0}
dt{font-weight:600;color:#59636e}
dd{margin:0}
details summary{cursor:pointer;color:#2b3a55}
ul.plain{list-style:none;padding:0;margin:0}
.local{color:#59636e}
pre{background:#f0f2f5;border-radius:6px;padding:.8rem 1rem;overflow-x:auto;font-size:.85rem;line-height:1.45}
pre code{background:none;padding:0;word-break:normal}
nav.toc a{margin-right:.8rem}
.warn{background:#fff4e5;border:1px solid #f5d0a0;color:#7a4b00;border-radius:5px;padding:.6rem .8rem;margin:.5rem 0 1rem}
`.trim()

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
<a href="/account" style="color:#fff">Account</a>
<form method="post" action="/account/logout"><input type="hidden" name="csrf_token" value="${o.csrfToken ?? ''}"><button class="link" type="submit">Sign out</button></form></div>`
    : html``
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${o.title} · kigo</title>
<style>${new SafeHtml(stylesheet)}</style>
</head>
<body>
<header><div class="bar"><a class="brand" href="/account">kigo</a><nav class="site"><a href="/developers">Developers</a><a href="/migration">Migration</a></nav>${who}</div></header>
<main${new SafeHtml(o.narrow ? ' class="narrow"' : o.wide ? ' class="wide"' : '')}>
${o.body}
</main>
${o.script ? html`<script nonce="${o.script.nonce}">${new SafeHtml(o.script.code)}</script>` : ''}
</body>
</html>
`.value
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
