// The security headers of every page (the gateway's account, sign-in, consent and guide
// pages, the dashboard, the OpenID Connect provider's pages, the core's public pages;
// docs/security.md#pages), from helmet, configured here once. A page states only what it
// needs beyond the shared policy (where its forms may post, its images, its one script's
// nonce, its Referer policy and caching); everything else is the same on every page.
//
// Pages only, and helmet's middleware rather than @fastify/helmet's plugin: the plugin
// adds two hooks to every request of an app, the API's included, even when it sets nothing
// there, and builds helmet anew for each request it does set (docs/performance.md#security-headers).
// Here each shape of policy gets its middleware once; the parts that change from page to
// page (form-action's origins, the script nonce) are read per response.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import helmet from 'helmet'

export interface PagePolicy {
  /** Where the page's forms may post besides nowhere: 'self' and these origins (a client's callback, which browsers check on the redirect too); 'none' for a page without a form. */
  formAction?: readonly string[] | 'none'
  /** The img-src sources, when the page shows images. */
  images?: string
  /** The nonce of the page's one inline script. */
  scriptNonce?: string
  /** The hashes (`'sha256-…'`) of inline scripts a page written by a library carries. */
  scriptHashes?: string[]
  /** no-referrer where URLs carry request tokens; same-origin where a sign-in post needs its Origin. */
  referrer?: 'no-referrer' | 'same-origin'
  /** `private, no-cache` for a page that names its reader: no shared cache keeps it. */
  cache?: 'no-store' | 'no-cache' | 'private, no-cache'
}

type HelmetOptions = NonNullable<Parameters<typeof helmet>[0]>
type Middleware = ReturnType<typeof helmet>

/** The policy of the page each response is writing, for the directives that change per page. */
const policies = new WeakMap<ServerResponse, PagePolicy>()
const policyOf = (res: ServerResponse): PagePolicy => policies.get(res) ?? {}

/**
 * A page's helmet options: nothing but inline style loads (and, where said, images and one
 * script by nonce), forms post only where allowed, no framing, no sniffing, the Referer
 * policy the page needs. Not sent: Strict-Transport-Security (whoever terminates TLS
 * decides it for the whole host) and Cross-Origin-Opener-Policy (a client may open the
 * sign-in or consent page in a pop-up and wait for it).
 */
function helmetOptions(p: PagePolicy): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'none'"],
        'style-src': ["'unsafe-inline'"],
        ...(p.images ? { 'img-src': [p.images] } : {}),
        ...(p.scriptNonce ? { 'script-src': [(_req: IncomingMessage, res: ServerResponse) => `'nonce-${policyOf(res).scriptNonce}'`] } : {}),
        ...(p.scriptHashes ? { 'script-src': [(_req: IncomingMessage, res: ServerResponse) => (policyOf(res).scriptHashes ?? []).join(' ')] } : {}),
        'form-action': [(_req: IncomingMessage, res: ServerResponse) => formActionOf(policyOf(res))],
        'frame-ancestors': ["'none'"],
        'base-uri': ["'none'"],
      },
    },
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: p.referrer ?? 'no-referrer' },
    strictTransportSecurity: false,
    crossOriginOpenerPolicy: false,
  }
}

function formActionOf(p: PagePolicy): string {
  return p.formAction === 'none' ? "'none'" : ["'self'", ...(p.formAction ?? [])].join(' ')
}

// One middleware per shape of policy (which directives it has, its Referer policy): a
// handful in all, made on first use.
const middlewares = new Map<string, Middleware>()
function middlewareFor(p: PagePolicy): Middleware {
  const shape = `${p.images ?? ''}|${p.scriptNonce === undefined ? '' : 'script'}|${p.scriptHashes === undefined ? '' : 'hashes'}|${p.referrer ?? ''}`
  let middleware = middlewares.get(shape)
  if (middleware === undefined) {
    middleware = helmet(helmetOptions(p))
    middlewares.set(shape, middleware)
  }
  return middleware
}

/** Sets a page's security headers and its caching on a response written outside Fastify's reply (the OpenID Connect provider's own pages). */
export function securePageResponse(req: IncomingMessage, res: ServerResponse, p: PagePolicy = {}): void {
  policies.set(res, p)
  // A directive helmet refuses (a value with `;` or `,`) is an error, never a page without its policy.
  middlewareFor(p)(req, res, (err?: unknown) => {
    if (err) throw err instanceof Error ? err : new Error('helmet refused a page policy')
  })
  res.setHeader('cache-control', p.cache ?? 'no-store')
}

/** Sets a page's security headers and its caching on `reply`. */
export function securePage(reply: FastifyReply, p: PagePolicy = {}): FastifyReply {
  securePageResponse(reply.request.raw, reply.raw, p)
  return reply
}
