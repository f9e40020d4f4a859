// A deployment answers to its host name and to the aliases configured for it (a second
// gateway reached on its own port, as in docker-compose.yml; a name without a port, as a
// client of the original sends on port 80), in every area: the API, the account pages,
// the OAuth provider, the login API, OpenID Connect and the guide pages. Links name the
// main host, never the alias. Any other host is 400 unknown_deployment with a message
// naming the hosts that are expected. A session is bound to the deployment it began at.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { codeOf, csrfOf, oauthHeader, WebClient } from './provider/helpers.js'
import { signInPath, type Site } from './login-api/helpers.js'

let stack: Stack
let port: string
let main: string
let alice: { id: string; password: string }

beforeAll(async () => {
  stack = await startStack({ overrides: { domesticHostAliases: ['localhost:18082', 'wiki.example'], globalHostAliases: ['127.0.0.1:18082'] } })
  port = new URL(stack.url).port
  main = `http://localhost:${port}`
  alice = await stack.addUser('alice', 'Alice')
}, 120_000)

afterAll(async () => {
  await stack?.close()
})

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; body: string }

function send(path: string, host: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: { host, ...o.headers } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(o.body)
  })
}
const get = (path: string, host: string) => send(path, host)

/** A visitor of the pages at `host`, keeping its cookies; redirects are not followed. */
class Visitor {
  readonly cookies = new Map<string, string>()
  constructor(readonly host: string) {}

  private keep(reply: Reply): Reply {
    const lines = reply.headers['set-cookie'] ?? []
    for (const line of Array.isArray(lines) ? lines : [lines]) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim())
    }
    return reply
  }

  private cookie(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
  }

  async get(path: string): Promise<Reply> {
    return this.keep(await send(path, this.host, { headers: this.cookie() }))
  }

  async post(path: string, form: Record<string, string>): Promise<Reply> {
    return this.keep(await send(path, this.host, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookie() }, body: new URLSearchParams(form).toString() }))
  }
}

describe('deployment host names', () => {
  it('answers on an alias as on the host itself', async () => {
    const viaAlias = await get('/api/statuses/show/1.json', 'localhost:18082')
    expect(viaAlias.status).toBe(404)
    expect(JSON.parse(viaAlias.body).error.code).toBe('entry_not_found')
    expect(JSON.parse((await get('/api/statuses/show/2.json', '127.0.0.1:18082')).body).error.code).not.toBe('unknown_deployment')
  })

  it('names the expected hosts in unknown_deployment', async () => {
    const r = await get('/api/statuses/show/1.json', 'elsewhere.example')
    expect(r.status).toBe(400)
    const { error } = JSON.parse(r.body)
    expect(error.code).toBe('unknown_deployment')
    expect(error.message).toBe(`The request host is not a deployment of this service; use one of localhost:${port}, localhost:18082, wiki.example, 127.0.0.1:${port}, 127.0.0.1:18082 (to serve another host name, set KIGO_DOMESTIC_HOST and KIGO_GLOBAL_HOST, and KIGO_DOMESTIC_HOST_ALIASES or KIGO_GLOBAL_HOST_ALIASES for more names; see docs/operations.md)`)
  })

  it('serves the account, guide and migration pages on an alias, a port-less one too, with links to the main host', async () => {
    for (const host of ['localhost:18082', 'wiki.example', 'WIKI.example:80']) {
      for (const path of ['/account/login', '/migration', '/developers', '/account/forgot']) {
        const r = await get(path, host)
        expect(r.status, `${host}${path}`).toBe(200)
        expect(r.headers['content-type'], `${host}${path}`).toMatch(/^text\/html/)
        expect(r.body, `${host}${path}`).not.toMatch(/18082|wiki\.example/i)
      }
    }
    expect((await get('/migration', 'wiki.example')).body).toContain(main)
    expect((await get('/developers', 'localhost:18082')).body).toContain(`${main}/oauth/initiate`)
  })

  it('refuses a host of no deployment on every area, each in its own format', async () => {
    const page = await get('/account/login', 'elsewhere.example')
    expect(page.status).toBe(400)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.body).toContain('not a deployment of this service')
    for (const path of ['/auth', '/account/oidc-clients', '/migration']) {
      const r = await get(path, 'elsewhere.example')
      expect(r.status, path).toBe(400)
      expect(r.body, path).toContain('not a deployment of this service')
    }
    const discovery = await get('/.well-known/openid-configuration', 'elsewhere.example')
    expect(discovery.status).toBe(400)
    expect(JSON.parse(discovery.body).error.code).toBe('unknown_deployment')
    const exchange = await get('/api/auth.json?api_key=x&cert=y&api_sig=z', 'elsewhere.example')
    expect(exchange.status).toBe(400)
    expect(JSON.parse(exchange.body).error.message).toContain('not a deployment of this service')
    const initiate = await send('/oauth/initiate', 'elsewhere.example', { method: 'POST' })
    expect(initiate.status).toBe(400)
    expect(initiate.body).toContain('unknown_deployment')
  })

  it('decides each request by its own Host however many other hosts came before, in any case and with the default port', async () => {
    // More hosts of no deployment than the gateway remembers; then the ones it must still tell apart.
    for (let i = 0; i < 80; i++) expect((await get('/account/login', `stranger-${i}.example`)).status).toBe(400)
    expect((await get('/account/login', 'stranger-81.example')).status).toBe(400)
    expect((await get('/account/login', 'WIKI.example')).status).toBe(200)
    expect((await get('/account/login', 'wiki.example:80')).status).toBe(200)
    const global = await get('/migration', '127.0.0.1:18082')
    expect(global.status).toBe(200)
    expect((await get('/migration', 'wiki.example')).body).toContain(main)
    expect(global.body).not.toContain(main)
  })

  it('OpenID Connect: the issuer and endpoints are the deployment’s main URL on every alias', async () => {
    for (const [host, issuer] of [['localhost:18082', main], ['wiki.example', main], ['127.0.0.1:18082', `http://127.0.0.1:${port}`]] as const) {
      const r = await get('/.well-known/openid-configuration', host)
      expect(r.status, host).toBe(200)
      const d = JSON.parse(r.body) as { issuer: string; authorization_endpoint: string; token_endpoint: string; jwks_uri: string }
      expect(d.issuer, host).toBe(issuer)
      for (const url of [d.authorization_endpoint, d.token_endpoint, d.jwks_uri]) expect(url.startsWith(`${issuer}/oidc/`), url).toBe(true)
    }
  })

  it('the login API signs in on an alias, and its exchange answers there', async () => {
    const site = (await stack.admin<Site>('POST', '/admin/sites', { name: 'Tea Party', owner: 'alice', callback: 'https://tea.example/cb' })).body
    const r = await get(signInPath(site), 'wiki.example')
    expect(r.status).toBe(200)
    expect(r.body).toContain('Sign in to tell Tea Party who you are.')
    const exchange = await get(`/api/auth.json?api_key=${site.api_key}&cert=nope&api_sig=0`, 'localhost:18082')
    expect(exchange.status).toBe(401)
    expect(JSON.parse(exchange.body).error.message).toMatch(/api_sig/)
  })

  it('the OAuth provider issues a request token on an alias, signed for the alias', async () => {
    const app = await stack.addOAuthClient('alice', ['read_public'])
    const url = 'http://localhost:18082/oauth/initiate'
    const authorization = oauthHeader({ url, consumer: { key: app.consumerKey, secret: app.consumerSecret }, oauth: { oauth_callback: 'oob' } })
    const r = await send('/oauth/initiate', 'localhost:18082', { method: 'POST', headers: { authorization } })
    expect(r.status).toBe(200)
    expect(new URLSearchParams(r.body).get('oauth_token')).toMatch(/.+/)
  })

  it('a user manages all they registered on a port-less alias: every account page and form answers there, and names only the main host', async () => {
    const v = new Visitor('wiki.example')
    const seen: Array<[string, Reply]> = []
    const see = (what: string, r: Reply, status: number) => {
      expect(r.status, `${what}: ${r.body.slice(0, 300)}`).toBe(status)
      seen.push([what, r])
      return r
    }
    const login = see('sign-in page', await v.get('/account/login'), 200)
    see('sign-in', await v.post('/account/login', { csrf_token: csrfOf(login.body), next: '/account', username: alice.id, password: alice.password }), 303)
    const account = see('account page', await v.get('/account'), 200)
    expect(account.body).toContain('Your account')

    // An OAuth application: registered, shown, edited, its secret replaced.
    // Each registration and new secret answers 303 to the page that shows the secret once,
    // on the alias (a relative Location); opened again, it shows no secret.
    const registered = see('application registered', await v.post('/account/apps', { csrf_token: csrfOf(account.body), name: 'Alias tool', scope: 'read_public' }), 303)
    const app = see('application secret page', await v.get(registered.headers.location as string), 200)
    const key = codeOf(app.body, 'consumer_key')!
    expect(registered.headers.location).toBe(`/account/apps/${key}/new-secret`)
    expect(codeOf(app.body, 'consumer_secret')).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    expect(codeOf(see('application secret page again', await v.get(`/account/apps/${key}/new-secret`), 200).body, 'consumer_secret')).toBeUndefined()
    const appPage = see('application page', await v.get(`/account/apps/${key}`), 200)
    see('application edited', await v.post(`/account/apps/${key}/edit`, { csrf_token: csrfOf(appPage.body), name: 'Alias tool 2', callback: 'https://tool.example/cb', home_url: 'https://tool.example/' }), 303)
    const asked = see('new secret asked', await v.post(`/account/apps/${key}/rotate-secret`, { csrf_token: csrfOf(appPage.body) }), 200)
    const rotation = see('new secret given', await v.post(`/account/apps/${key}/rotate-secret`, { csrf_token: csrfOf(asked.body), confirm: 'yes', overlap: '0' }), 303)
    const rotated = see('new secret page', await v.get(rotation.headers.location as string), 200)
    expect(codeOf(rotated.body, 'consumer_secret')).toMatch(/^[A-Za-z0-9_-]{40,}$/)

    // A login API site and an OpenID Connect client, each on its own page.
    const sites = see('sites page', await v.get('/account/sites'), 200)
    const site = see('site registered', await v.post('/account/sites', { csrf_token: csrfOf(sites.body), name: 'Alias wiki', callback: 'https://wiki.tea.example/cb', home_url: '' }), 303)
    const siteSecret = see('site secret page', await v.get(site.headers.location as string), 200)
    expect(site.headers.location).toBe(`/account/sites/${codeOf(siteSecret.body, 'api_key')}/new-secret`)
    expect(codeOf(siteSecret.body, 'secret')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(codeOf(see('site secret page again', await v.get(site.headers.location as string), 200).body, 'secret')).toBeUndefined()
    const clients = see('OpenID Connect clients page', await v.get('/account/oidc-clients'), 200)
    const client = see('OpenID Connect client registered', await v.post('/account/oidc-clients', { csrf_token: csrfOf(clients.body), name: 'Alias site', type: 'confidential', redirect_uris: 'https://site.tea.example/cb' }), 303)
    const clientSecret = see('OpenID Connect client secret page', await v.get(client.headers.location as string), 200)
    expect(client.headers.location).toBe(`/account/oidc-clients/${codeOf(clientSecret.body, 'client_id')}/new-secret`)
    expect(codeOf(clientSecret.body, 'client_secret')).toMatch(/^[A-Za-z0-9_-]{32,}$/)
    expect(codeOf(see('OpenID Connect client secret page again', await v.get(client.headers.location as string), 200).body, 'client_secret')).toBeUndefined()
    see('account page after', await v.get('/account'), 200)

    for (const [what, r] of seen) {
      const leak = /.{0,200}(?:wiki\.example|18082).{0,100}/i.exec(r.body)
      expect(leak?.[0] ?? null, what).toBeNull()
      const location = r.headers.location
      if (typeof location === 'string') expect(location.startsWith('/') || location.startsWith(`${main}/`), `${what}: ${location}`).toBe(true)
    }
    // What was done on the alias is there at the main host.
    expect((await stack.admin<{ name: string }>('GET', `/admin/apps/${key}`)).body.name).toBe('Alias tool 2')
  })

  it('a session begun at one deployment is one on its aliases, and none at the other deployment', async () => {
    const web = new WebClient(stack.url)
    expect((await web.signIn('/account/login', alice.id, alice.password)).status).toBe(303)
    const cookie = `kigo_session=${web.cookies.get('kigo_session')}`
    const here = await send('/account', `localhost:${port}`, { headers: { cookie } })
    expect(here.status).toBe(200)
    expect(here.body).toContain('Your account')
    expect((await send('/account', 'wiki.example', { headers: { cookie } })).status).toBe(200)
    const there = await send('/account', `127.0.0.1:${port}`, { headers: { cookie } })
    expect(there.status).toBe(303)
    expect(there.headers.location).toMatch(/^\/account\/login/)
    expect((await send('/account', '127.0.0.1:18082', { headers: { cookie } })).status).toBe(303)
  })
})
