// OAuth 2.0 clients for the tests: the independent `openid-client` library runs the
// grants (authorization code with PKCE, refresh, device flow, revocation, introspection);
// a cookie-keeping HTTP client plays the person through kigo's own pages. The token
// exchange's requests are signed by the npm `oauth-1.0a` client, its parameters in the body.
import { request as httpRequest } from 'node:http'
import { oauth1aClient } from '../../helpers/oauth1a.js'
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

/** A request with headers exactly as given (repeated names kept): what an attacker can send. `host`: the Host header, when not `base`'s. */
export function rawRequest(base: string, method: string, path: string, headers: Array<[string, string]>, body?: string, host?: string): Promise<Answer> {
  const url = new URL(path, base)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: [['Host', host ?? url.host], ...headers, ...(body !== undefined ? [['Content-Length', String(Buffer.byteLength(body))]] : [])].flat() },
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

/** An API call with `Authorization: Bearer <token>`; `host`: the Host header, when not `base`'s (an alias). */
export async function bearer(base: string, method: string, path: string, token: string, form?: Record<string, string>, host?: string): Promise<{ status: number; body: Record<string, unknown>; challenge: string | null }> {
  const headers: Array<[string, string]> = [['Authorization', `Bearer ${token}`], ...(form ? [['Content-Type', 'application/x-www-form-urlencoded'] as [string, string]] : [])]
  const res = await rawRequest(base, method, path, headers, form ? new URLSearchParams(form).toString() : undefined, host)
  let body: Record<string, unknown>
  try {
    body = JSON.parse(res.text) as Record<string, unknown>
  } catch {
    body = { text: res.text }
  }
  const challenge = res.headers['www-authenticate']
  return { status: res.status, body, challenge: Array.isArray(challenge) ? challenge.join(', ') : (challenge ?? null) }
}

export async function registerApiClient(stack: Pick<Stack, 'admin'>, o: { name: string; owner: string; scopes: string[]; public?: boolean }): Promise<RegisteredClient> {
  return registerClient(stack, { name: o.name, owner: o.owner, redirect_uris: [redirectUri], api_scopes: o.scopes, ...(o.public ? { public: true } : {}) })
}

export const exchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange'
export const oauth1TokenType = 'urn:kigo:params:oauth:token-type:oauth1-access-token'

/** An OAuth 1.0a application with OAuth 2.0 turned on: its consumer and its client. */
export interface ExchangeApp { key: string; secret: string; clientId: string; clientSecret?: string; name: string }
export interface OAuth1Token { token: string; secret: string }

/** An OAuth 1.0a application registered and turned on through the operator API. */
export async function registerExchangeApp(stack: Pick<Stack, 'admin'>, name: string, owner: string, scopes: string[], o: { public?: boolean } = {}): Promise<ExchangeApp> {
  const a = await stack.admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name, owner, scopes, callback: 'https://app.example/callback' })
  if (a.status !== 201) throw new Error(`register ${name}: ${a.status}`)
  const on = await stack.admin<{ client_id: string; client_secret?: string }>('POST', `/admin/apps/${a.body.consumer_key}/oauth2`, o.public ? { public: true } : {})
  if (on.status !== 201) throw new Error(`turn OAuth 2.0 on for ${name}: ${on.status}`)
  return { key: a.body.consumer_key, secret: a.body.consumer_secret, clientId: on.body.client_id, ...(on.body.client_secret ? { clientSecret: on.body.client_secret } : {}), name }
}

/** An OAuth 1.0a access token of `app` for `user`, through the operator API. */
export async function issueOAuth1Token(stack: Pick<Stack, 'admin'>, app: ExchangeApp, user: string, scopes: string[]): Promise<OAuth1Token> {
  const t = await stack.admin<{ token: string; token_secret: string }>('POST', '/admin/tokens', { consumer: app.key, user, scopes })
  if (t.status !== 201) throw new Error(`issue a token: ${t.status}`)
  return { token: t.body.token, secret: t.body.token_secret }
}

/** The exchange's form body for `tokenEndpoint`, signed with `signer`'s consumer secret and `token`'s secret. */
export function signedExchangeBody(tokenEndpoint: string, signer: { key: string; secret: string }, token: OAuth1Token, extra: Record<string, string> = {}, subject = token.token): Record<string, string> {
  const data: Record<string, string> = { grant_type: exchangeGrant, subject_token: subject, subject_token_type: oauth1TokenType, ...extra }
  const oauth = oauth1aClient({ key: signer.key, secret: signer.secret }).authorize({ url: tokenEndpoint, method: 'POST', data }, { key: token.token, secret: token.secret })
  return { ...data, ...Object.fromEntries(Object.entries(oauth).map(([k, v]) => [k, String(v)])) }
}

/** A form posted to `tokenEndpoint` by `app`'s client (Basic, or `client_id` in the body for a public one); `host`: the Host header, when not the endpoint's (an alias). */
export async function tokenPost(tokenEndpoint: string, app: ExchangeApp, body: Record<string, string>, o: { clientSecret?: string; host?: string } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const secret = o.clientSecret ?? app.clientSecret
  const headers: Array<[string, string]> = [['Content-Type', 'application/x-www-form-urlencoded']]
  if (secret !== undefined) headers.push(['Authorization', `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`])
  const answer = await rawRequest(tokenEndpoint, 'POST', tokenEndpoint, headers, new URLSearchParams(secret === undefined ? { ...body, client_id: app.clientId } : body).toString(), o.host)
  return { status: answer.status, body: JSON.parse(answer.text) as Record<string, unknown> }
}
