// Seeds the running topology through its public surfaces only: a user, an application
// and access tokens through the operator API (docs/gateway.md#the-operator-api-and-dashboard), then entries posted through
// the gateway with Basic (docs/api.md#statusesupdate), concurrently.
import { request, type Dispatcher } from 'undici'
import { basicAuthorization, type OAuthCredentials } from './signing.js'
import type { Fixture } from './scenarios.js'

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
  return { host: opts.host, user: { id: user.id, apiPassword: user.api_password, password: user.password }, tokens, entryIds }
}
