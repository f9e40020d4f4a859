// Clients for the provider tests: OAuth requests signed by the independent npm
// `oauth-sign` library (never by the code under test), and a small browser-like client
// that keeps cookies and reads CSRF tokens out of the pages.
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'

type Params = Record<string, string | string[]>
// The module's plain functions (no `this`): they may be passed around on their own.
interface OAuthSign {
  hmacsign: (method: string, baseUri: string, params: Params, consumerSecret: string, tokenSecret: string) => string
  hmacsign256: (method: string, baseUri: string, params: Params, consumerSecret: string, tokenSecret: string) => string
  rfc3986: (s: string) => string
}
const oauthSign = createRequire(import.meta.url)('oauth-sign') as OAuthSign

export interface OAuthCall {
  /** Absolute URL, query included. */
  url: string
  method?: string
  consumer: { key: string; secret: string }
  token?: { token: string; secret: string }
  /** Protocol parameters beyond the usual ones (oauth_callback, oauth_verifier…). */
  oauth?: Record<string, string>
  /** Form body parameters (signed). */
  form?: Record<string, string | string[]>
  /** Seconds since the epoch (default: now). */
  timestamp?: number
  nonce?: string
  /** Sign with this consumer secret instead (a forged signature). */
  signWithSecret?: string
  signatureMethod?: 'HMAC-SHA1' | 'HMAC-SHA256'
}

function addAll(target: Params, pairs: Iterable<[string, string]>): void {
  for (const [k, v] of pairs) {
    const prev = target[k]
    target[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
  }
}

function formPairs(form: Record<string, string | string[]>): Array<[string, string]> {
  return Object.entries(form).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x): [string, string] => [k, x]) : [[k, v] as [string, string]]))
}

/** The Authorization header for `call`. */
export function oauthHeader(call: OAuthCall): string {
  const method = call.method ?? 'POST'
  const url = new URL(call.url)
  const protocol: Record<string, string> = {
    oauth_consumer_key: call.consumer.key,
    oauth_signature_method: call.signatureMethod ?? 'HMAC-SHA1',
    oauth_timestamp: String(call.timestamp ?? Math.floor(Date.now() / 1000)),
    oauth_nonce: call.nonce ?? randomBytes(12).toString('hex'),
    oauth_version: '1.0',
    ...(call.token ? { oauth_token: call.token.token } : {}),
    ...call.oauth,
  }
  const all: Params = { ...protocol }
  addAll(all, url.searchParams)
  if (call.form) addAll(all, formPairs(call.form))
  const baseUri = `${url.protocol}//${url.host}${url.pathname}`
  const sign = protocol.oauth_signature_method === 'HMAC-SHA256' ? oauthSign.hmacsign256 : oauthSign.hmacsign
  const signature = sign(method, baseUri, all, call.signWithSecret ?? call.consumer.secret, call.token?.secret ?? '')
  const params = { ...protocol, oauth_signature: signature }
  return 'OAuth realm="kigo", ' + Object.entries(params).map(([k, v]) => `${k}="${oauthSign.rfc3986(v)}"`).join(', ')
}

export interface Answer {
  status: number
  headers: Headers
  text: string
  /** The form-encoded body, parsed. */
  form: URLSearchParams
  json(): any
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, form: new URLSearchParams(text), json: () => JSON.parse(text) }
}

/** Sends `call`, signed, with its form body (through `fetchVia`: the network's fetch, or a gateway app's, test/helpers/gateway-app.ts). */
export async function oauthFetch(call: OAuthCall, extraHeaders: Record<string, string> = {}, fetchVia: typeof fetch = fetch): Promise<Answer> {
  const method = call.method ?? 'POST'
  const body = call.form ? new URLSearchParams(formPairs(call.form)).toString() : undefined
  const res = await fetchVia(call.url, {
    method,
    headers: { authorization: oauthHeader(call), ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...extraHeaders },
    body,
    redirect: 'manual',
  })
  return answer(res)
}

/** The oauth_problem and its parameters from a WWW-Authenticate OAuth challenge. */
export function oauthChallenge(headers: Headers): Record<string, string> {
  const h = headers.get('www-authenticate') ?? ''
  const out: Record<string, string> = {}
  if (!/^OAuth /.test(h)) return out
  for (const m of h.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) out[m[1]!] = m[2]!.replace(/\\(.)/g, '$1')
  return out
}

/**
 * A cookie-keeping client of the pages (redirects are not followed, so tests see them),
 * through `fetchVia`: the network's fetch, or a gateway app's (test/helpers/gateway-app.ts).
 */
export class WebClient {
  readonly cookies = new Map<string, string>()
  constructor(readonly base: string, private readonly fetchVia: typeof fetch = fetch) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
  }

  async get(path: string): Promise<Answer> {
    const res = await this.fetchVia(new URL(path, this.base), { headers: this.cookieHeader(), redirect: 'manual' })
    this.remember(res)
    return answer(res)
  }

  async post(path: string, form: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await this.fetchVia(new URL(path, this.base), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader(), ...headers },
      body: new URLSearchParams(formPairs(form)).toString(),
      redirect: 'manual',
    })
    this.remember(res)
    return answer(res)
  }

  /**
   * Posts, and follows a 303 with a GET as a browser does: the page the browser then shows,
   * with the post's own status and Location (a registration or a new secret answers 303).
   */
  async postAndFollow(path: string, form: Record<string, string | string[]>): Promise<Answer & { posted: number; location: string | null }> {
    const posted = await this.post(path, form)
    const location = posted.headers.get('location')
    if (posted.status !== 303 || location === null) return { ...posted, posted: posted.status, location }
    return { ...(await this.get(location)), posted: posted.status, location }
  }

  /** Signs in through the login form at `path` (the authorize page or /account/login). */
  async signIn(path: string, username: string, password: string): Promise<Answer> {
    const login = await this.get(path)
    const next = hiddenField(login.text, 'next') ?? '/account'
    return this.post('/account/login', { csrf_token: csrfOf(login.text), next, username, password })
  }
}

export function hiddenField(page: string, name: string): string | null {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)
  return m ? unescapeHtml(m[1]!) : null
}

/** The text of the page's `<code>` element of that id (a key or secret a page shows), or undefined. */
export function codeOf(page: string, id: string): string | undefined {
  return new RegExp(`<code[^>]*id="${id}"[^>]*>([^<]+)</code>`).exec(page)?.[1]
}

export function csrfOf(page: string): string {
  const token = hiddenField(page, 'csrf_token')
  if (!token) throw new Error('the page has no CSRF token')
  return token
}

function unescapeHtml(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}
