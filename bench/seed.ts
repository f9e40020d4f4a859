// Seeds the running topology through its public surfaces only: a user, an application
// and access tokens through the operator API (docs/gateway.md#the-operator-api-and-dashboard), then entries posted through
// the gateway with Basic (docs/api.md#statusesupdate), concurrently.
import { request, type Dispatcher } from 'undici'
import { basicAuthorization, oauthParameters, type OAuthCredentials } from './signing.js'
import type { BearerFixture, Fixture } from './scenarios.js'

export interface SeedOptions {
  adminUrl: string
  adminToken: string
  gatewayUrl: string
  /** Host header for the gateway: the domestic host. */
  host: string
  entries: number
  tokens: number
  concurrency?: number
  /** Where the requests' connections are kept (undici's global dispatcher otherwise). */
  dispatcher?: Dispatcher
}

async function admin<T>(opts: SeedOptions, path: string, body: unknown): Promise<T> {
  const res = await request(`${opts.adminUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  })
  const text = await res.body.text()
  if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`)
  return JSON.parse(text) as T
}

export async function seed(opts: SeedOptions): Promise<Fixture> {
  const userId = 'benchuser'
  const user = await admin<{ id: string; password: string; api_password: string }>(opts, '/admin/users', { id: userId, name: 'Bench User' })
  const scopes = ['read_public', 'write_public']
  const app = await admin<{ consumer_key: string; consumer_secret: string }>(opts, '/admin/apps', { name: 'kigo bench', owner: userId, scopes })
  const tokens: OAuthCredentials[] = []
  for (let i = 0; i < opts.tokens; i++) {
    const t = await admin<{ token: string; token_secret: string }>(opts, '/admin/tokens', { consumer: app.consumer_key, user: userId, scopes })
    tokens.push({ consumerKey: app.consumer_key, consumerSecret: app.consumer_secret, token: t.token, tokenSecret: t.token_secret })
  }

  const bearer = await exchangedTokens(opts, app.consumer_key, tokens)

  const authorization = basicAuthorization(user.id, user.api_password)
  const entryIds = new Array<string>(opts.entries)
  let next = 0
  const post = async () => {
    for (let i = next++; i < opts.entries; i = next++) {
      const res = await request(`${opts.gatewayUrl}/api/statuses/update.json`, {
        method: 'POST',
        headers: { host: opts.host, authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ keyword: 'bench', status: `seeded entry ${i}` }).toString(),
        ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
      })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`seeding entry ${i}: ${res.statusCode} ${text.slice(0, 300)}`)
      entryIds[i] = (JSON.parse(text) as { id: string }).id
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, post))
  return { host: opts.host, user: { id: user.id, apiPassword: user.api_password, password: user.password }, tokens, bearer, entryIds }
}

const exchangeGrant = 'urn:ietf:params:oauth:grant-type:token-exchange'
const oauth1TokenType = 'urn:kigo:params:oauth:token-type:oauth1-access-token'

async function gatewayJson<T>(opts: SeedOptions, method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: string): Promise<T> {
  const res = await request(`${opts.gatewayUrl}${path}`, { method, headers: { host: opts.host, ...headers }, ...(body === undefined ? {} : { body }), ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}) })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`)
  return JSON.parse(text) as T
}

/**
 * The OAuth 2.0 access tokens of the Bearer scenarios, obtained the way an OAuth 1.0a
 * application moves (docs/oauth2.md#for-an-oauth-10a-application): the application turns
 * OAuth 2.0 on, then exchanges each of its OAuth 1.0a tokens at the token endpoint. With
 * them, what the required-work proxy needs to verify them: the issuer and its public keys.
 */
async function exchangedTokens(opts: SeedOptions, consumerKey: string, tokens: OAuthCredentials[]): Promise<BearerFixture> {
  const client = await admin<{ client_id: string; client_secret: string }>(opts, `/admin/apps/${consumerKey}/oauth2`, { redirect_uri: 'https://bench.example/callback' })
  const discovery = await gatewayJson<{ issuer: string; token_endpoint: string; jwks_uri: string }>(opts, 'GET', '/.well-known/oauth-authorization-server')
  const { keys } = await gatewayJson<{ keys: Array<Record<string, unknown>> }>(opts, 'GET', new URL(discovery.jwks_uri).pathname)
  const tokenPath = new URL(discovery.token_endpoint).pathname
  const basic = basicAuthorization(encodeURIComponent(client.client_id), encodeURIComponent(client.client_secret))
  const accessTokens: string[] = []
  for (const t of tokens) {
    const params: Array<[string, string]> = [
      ['grant_type', exchangeGrant],
      ['subject_token', t.token],
      ['subject_token_type', oauth1TokenType],
    ]
    const signed = oauthParameters(t, { method: 'POST', baseUri: `http://${opts.host.toLowerCase()}${tokenPath}`, params })
    const body = new URLSearchParams([...params, ...signed]).toString()
    const answer = await gatewayJson<{ access_token: string }>(opts, 'POST', tokenPath, { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body)
    accessTokens.push(answer.access_token)
  }
  return { accessTokens, issuer: discovery.issuer, keys }
}
