// OAuth 2.0 clients for the tests: the independent `openid-client` library runs the
// grants (authorization code with PKCE, refresh, device flow, revocation, introspection);
// a cookie-keeping HTTP client plays the person through kigo's own pages.
import { request as httpRequest } from 'node:http'
import { WebClient, csrfOf, hiddenField } from '../provider/helpers.js'
import { browse, oidc, registerClient, type RegisteredClient } from '../oidc/helpers.js'
import type { Stack } from '../../helpers/stack.js'

export { oidc, registerClient, type RegisteredClient }

export const redirectUri = 'https://app.example/callback'

/** openid-client's configuration from the RFC 8414 metadata (not the OpenID discovery document). */
export async function discoverOAuth(issuer: string, client: RegisteredClient): Promise<oidc.Configuration> {
  const auth = client.client_secret ? oidc.ClientSecretBasic(client.client_secret) : oidc.None()
  return oidc.discovery(new URL(issuer), client.client_id, client.client_secret ? { client_secret: client.client_secret } : undefined, auth, {
    execute: [oidc.allowInsecureRequests],
    algorithm: 'oauth2',
  })
}

/** The authorization code flow with PKCE (S256), the person allowing on the consent page. */
export async function codeFlow(
  config: oidc.Configuration,
  user: { id: string; password: string },
  scope: string,
  o: { onPage?: (path: string, text: string) => void; extra?: Record<string, string> } = {},
): Promise<oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers> {
  const verifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...o.extra,
  })
  const { callback } = await browse(url, redirectUri, user, o.onPage ? { onPage: o.onPage } : {})
  return oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: scope.split(' ').includes('openid') })
}

/**
 * The device flow as a person does it on a phone: signs in, opens the verification URI,
 * types the code, confirms, allows on the consent page. Returns the pages seen.
 */
export async function approveOnPhone(base: string, verificationUri: string, userCode: string, user: { id: string; password: string }, o: { confirm?: boolean } = {}): Promise<string[]> {
  const phone = new WebClient(base)
  const signedIn = await phone.signIn('/account/login', user.id, user.password)
  if (signedIn.status !== 303) throw new Error(`sign-in: ${signedIn.status}`)
  const pages: string[] = []
  const path = new URL(verificationUri).pathname
  const input = await phone.get(path)
  pages.push(input.text)
  const typed = await phone.post(path, { xsrf: hiddenXsrf(input.text), user_code: userCode })
  pages.push(typed.text)
  if (typed.status !== 200) throw new Error(`code page: ${typed.status} ${typed.text.slice(0, 300)}`)
  const confirmed = await phone.post(path, o.confirm === false ? { xsrf: hiddenXsrf(typed.text), user_code: userCode, confirm: 'yes', abort: 'yes' } : { xsrf: hiddenXsrf(typed.text), user_code: userCode, confirm: 'yes' })
  pages.push(confirmed.text)
  let next = confirmed.headers.get('location')
  for (let step = 0; next !== null && step < 10; step++) {
    const page = await phone.get(next)
    pages.push(page.text)
    const consent = /action="(\/oidc\/interaction\/[^"]+\/confirm)"/.exec(page.text)
    if (consent) {
      const answer = await phone.post(consent[1]!, { csrf_token: csrfOf(page.text), decision: 'allow' })
      next = answer.headers.get('location')
      continue
    }
    next = page.status === 302 || page.status === 303 ? page.headers.get('location') : null
  }
  return pages
}

function hiddenXsrf(page: string): string {
  const m = /name="xsrf" value="([^"]+)"/.exec(page) ?? [null, hiddenField(page, 'xsrf')]
  if (!m[1]) throw new Error(`no xsrf on the page: ${page.slice(0, 300)}`)
  return m[1]
}

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

/** A request with headers exactly as given (repeated names kept): what an attacker can send. */
export function rawRequest(base: string, method: string, path: string, headers: Array<[string, string]>, body?: string): Promise<Answer> {
  const url = new URL(path, base)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: [['Host', url.host], ...headers, ...(body !== undefined ? [['Content-Length', String(Buffer.byteLength(body))]] : [])].flat() },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** An API call with `Authorization: Bearer <token>`. */
export async function bearer(base: string, method: string, path: string, token: string, form?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown>; challenge: string | null }> {
  const res = await fetch(new URL(path, base), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  })
  const text = await res.text()
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    body = { text }
  }
  return { status: res.status, body, challenge: res.headers.get('www-authenticate') }
}

export async function registerApiClient(stack: Pick<Stack, 'admin'>, o: { name: string; owner: string; scopes: string[]; public?: boolean }): Promise<RegisteredClient> {
  return registerClient(stack, { name: o.name, owner: o.owner, redirect_uris: [redirectUri], api_scopes: o.scopes, ...(o.public ? { public: true } : {}) })
}
