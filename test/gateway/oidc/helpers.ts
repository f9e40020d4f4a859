// A relying party for the OpenID Connect tests: the independent `openid-client` library
// does discovery, the authorization URL with PKCE, the code exchange, the ID token's
// signature against the JWKS and userinfo; a cookie-keeping HTTP client plays the
// browser through kigo's own login and consent pages.
import * as oidc from 'openid-client'
import { csrfOf, hiddenField, WebClient } from '../provider/helpers.js'
import type { Stack } from '../../helpers/stack.js'

export { oidc }

export interface RegisteredClient {
  client_id: string
  client_secret?: string
  redirect_uris: string[]
}

export async function registerClient(stack: Pick<Stack, 'admin'>, body: Record<string, unknown>): Promise<RegisteredClient> {
  const r = await stack.admin<RegisteredClient>('POST', '/admin/oidc-clients', body)
  if (r.status !== 201) throw new Error(`register client: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body
}

/** openid-client's configuration from discovery; http allowed (the tests' deployments are local). */
export async function discover(issuer: string, client: RegisteredClient, fetchVia?: (url: string, init: RequestInit) => Promise<Response>): Promise<oidc.Configuration> {
  const auth = client.client_secret ? oidc.ClientSecretBasic(client.client_secret) : oidc.None()
  const options: oidc.DiscoveryRequestOptions = { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] }
  if (fetchVia) options[oidc.customFetch] = (url, init) => fetchVia(url, init as RequestInit)
  const config = await oidc.discovery(new URL(issuer), client.client_id, client.client_secret ? { client_secret: client.client_secret } : undefined, auth, options)
  if (fetchVia) config[oidc.customFetch] = (url, init) => fetchVia(url, init as RequestInit)
  return config
}

export interface Started {
  url: URL
  verifier: string
  state: string
  nonce: string
}

export async function startSignIn(config: oidc.Configuration, redirectUri: string, extra: Record<string, string> = {}): Promise<Started> {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  })
  return { url, verifier, state, nonce }
}

/**
 * Plays the browser from the authorization URL to the redirect back to the site: follows
 * redirects, signs in on kigo's login form, and answers the consent page. Returns the
 * callback URL (with `code`), or throws with the page it stopped at.
 */
export async function browse(
  start: URL,
  redirectUri: string,
  user: { id: string; password: string },
  o: { decision?: 'allow' | 'deny'; browser?: WebClient; fetchVia?: typeof fetch; onPage?: (path: string, text: string) => void; switchTo?: () => WebClient } = {},
): Promise<{ callback: URL; browser: WebClient; pages: string[] }> {
  let browser = o.browser ?? new WebClient(start.origin, o.fetchVia)
  const pages: string[] = []
  let next: string = start.pathname + start.search
  for (let step = 0; step < 20; step++) {
    const page = await browser.get(next)
    pages.push(`${page.status} ${next.split('?')[0]}`)
    o.onPage?.(next, page.text)
    if (page.status === 302 || page.status === 303) {
      const location = page.headers.get('location')!
      if (location.startsWith(redirectUri)) return { callback: new URL(location), browser, pages }
      const to = new URL(location, start)
      next = to.pathname + to.search
      if (o.switchTo) {
        // The rest of the sign-in on another gateway, with the same cookies.
        const other = o.switchTo()
        for (const [k, v] of browser.cookies) other.cookies.set(k, v)
        browser = other
      }
      continue
    }
    if (page.status !== 200) throw new Error(`stopped at ${next}: ${page.status} ${page.text.slice(0, 500)}`)
    if (page.text.includes('action="/account/login"')) {
      pages[pages.length - 1] += ' [sign-in form]'
      const answer = await browser.post('/account/login', { csrf_token: csrfOf(page.text), next: hiddenField(page.text, 'next') ?? '', username: user.id, password: user.password })
      if (answer.status !== 303) throw new Error(`login refused: ${answer.status} ${answer.text.slice(0, 300)}`)
      next = answer.headers.get('location')!
      continue
    }
    const confirm = /action="(\/oidc\/interaction\/[^"]+\/confirm)"/.exec(page.text)
    if (confirm) {
      const answer = await browser.post(confirm[1]!, { csrf_token: csrfOf(page.text), decision: o.decision ?? 'allow' })
      if (answer.status !== 303) throw new Error(`consent refused: ${answer.status} ${answer.text.slice(0, 300)}`)
      const location = answer.headers.get('location')!
      if (location.startsWith(redirectUri)) return { callback: new URL(location), browser, pages }
      const to = new URL(location, start)
      next = to.pathname + to.search
      continue
    }
    throw new Error(`unexpected page at ${next}: ${page.text.slice(0, 500)}`)
  }
  throw new Error(`too many steps: ${pages.join(', ')}`)
}
