// What a gateway in production has served before the benchmark times it: OpenID Connect
// discovery and one whole sign-in (docs/performance.md#how-it-measures). The first request
// to the provider runs oidc-provider's AsyncLocalStorage; a gateway that never served one
// would be measured without whatever that leaves behind for every later request.
// Everything goes through the gateway's public surfaces: a relying party registered on the
// operator API, the authorization request with PKCE, kigo's sign-in and consent pages,
// and the code exchanged for tokens at the token endpoint.
import { createHash, randomBytes } from 'node:crypto'
import { request } from 'undici'

export interface SignInTarget {
  /** The gateway the requests reach (its own URL, whatever host it serves). */
  gatewayUrl: string
  /** Host header of every request: the deployment's host. */
  host: string
  /** The account holder who signs in: a user ID and its login password. */
  user: { id: string; password: string }
  /** The relying party, registered once (`relyingParty`) and used at every gateway. */
  client: { client_id: string; client_secret: string; redirect_uri: string }
}

const redirectUri = 'https://bench.example/callback'

/** Registers the benchmark's relying party on the operator API. */
export async function relyingParty(adminUrl: string, adminToken: string, owner: string): Promise<SignInTarget['client']> {
  const res = await request(`${adminUrl}/admin/oidc-clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'kigo bench site', owner, redirect_uris: [redirectUri] }),
  })
  const text = await res.body.text()
  if (res.statusCode !== 201) throw new Error(`registering the OpenID Connect client: ${res.statusCode} ${text.slice(0, 300)}`)
  const { client_id, client_secret } = JSON.parse(text) as { client_id: string; client_secret: string }
  return { client_id, client_secret, redirect_uri: redirectUri }
}

interface Answer {
  status: number
  location: string | null
  text: string
}

const hidden = (page: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)?.[1]?.replaceAll('&amp;', '&') ?? null

/** Discovery, then one sign-in to the end (the code exchanged for tokens); throws at any step that fails. */
export async function signInOnce(t: SignInTarget): Promise<void> {
  const cookies = new Map<string, string>()
  const send = async (method: 'GET' | 'POST', path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await request(`${t.gatewayUrl}${path}`, {
      method,
      headers: {
        host: t.host,
        ...(cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    })
    const setCookie = res.headers['set-cookie']
    for (const line of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
      const pair = line.split(';', 1)[0]!
      const eq = pair.indexOf('=')
      if (pair.slice(eq + 1) === '' || /max-age=0/i.test(line)) cookies.delete(pair.slice(0, eq))
      else cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    const location = res.headers.location
    return { status: res.statusCode, location: typeof location === 'string' ? location : null, text: await res.body.text() }
  }
  const pathOf = (url: string) => {
    const u = new URL(url, 'http://gateway')
    return u.pathname + u.search
  }

  const discovery = await send('GET', '/.well-known/openid-configuration')
  if (discovery.status !== 200) throw new Error(`discovery: ${discovery.status} ${discovery.text.slice(0, 300)}`)
  const meta = JSON.parse(discovery.text) as { authorization_endpoint: string; token_endpoint: string }

  const verifier = randomBytes(32).toString('base64url')
  const authorize = new URLSearchParams({
    client_id: t.client.client_id,
    redirect_uri: t.client.redirect_uri,
    response_type: 'code',
    scope: 'openid profile',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('base64url'),
    nonce: randomBytes(8).toString('base64url'),
  })
  let next = `${pathOf(meta.authorization_endpoint)}?${authorize.toString()}`
  let code: string | null = null
  for (let step = 0; step < 20 && code === null; step++) {
    const page = await send('GET', next)
    let answer = page
    if (page.status === 200 && page.text.includes('action="/account/login"')) {
      answer = await send('POST', '/account/login', { csrf_token: hidden(page.text, 'csrf_token') ?? '', next: hidden(page.text, 'next') ?? '', username: t.user.id, password: t.user.password })
    } else if (page.status === 200) {
      const confirm = /action="(\/oidc\/interaction\/[^"]+\/confirm)"/.exec(page.text)
      if (!confirm) throw new Error(`sign-in stopped at ${next.split('?')[0]}: an unexpected page`)
      answer = await send('POST', confirm[1]!, { csrf_token: hidden(page.text, 'csrf_token') ?? '', decision: 'allow' })
    }
    if (answer.location === null || answer.status < 300 || answer.status > 303) throw new Error(`sign-in stopped at ${next.split('?')[0]}: ${answer.status} ${answer.text.slice(0, 300)}`)
    if (answer.location.startsWith(t.client.redirect_uri)) code = new URL(answer.location).searchParams.get('code')
    else next = pathOf(answer.location)
  }
  if (code === null) throw new Error('sign-in: no authorization code')
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(t.client.client_id)}:${encodeURIComponent(t.client.client_secret)}`).toString('base64')}`
  const token = await send('POST', pathOf(meta.token_endpoint), { grant_type: 'authorization_code', code, redirect_uri: t.client.redirect_uri, code_verifier: verifier }, { authorization: basic })
  if (token.status !== 200 || !token.text.includes('id_token')) throw new Error(`token exchange: ${token.status} ${token.text.slice(0, 300)}`)
}
