// Structured logs (docs/gateway.md#metrics): the gateway writes one JSON line per public request with
// request ID, route, auth method, user, consumer, outcome, status and duration, and never
// a credential. The whole log stream of a gateway at level trace is captured while Basic,
// WSSE, OAuth, operator and dashboard requests, good and bad, carry known secrets; none of
// those strings may appear anywhere in it.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, type Config } from '../../../src/common/config.js'
import { startCore } from '../../../src/core/server.js'
import { startGateway, type RunningGateway } from '../../../src/gateway/server.js'
import { stackEnv } from '../../helpers/stack.js'
import { basicHeader, form, oauthHeader, wsseHeader, type OAuthClient } from '../policy/signers.js'
import { embeddedDataDir } from '../../helpers/embedded-template.js'

const lines: string[] = []
const stream = { write: (chunk: string) => void lines.push(chunk) }
const secrets = new Set<string>()
const keep = (...values: string[]) => values.forEach((v) => secrets.add(v))

let dir: string
let config: Config
let core: { close(): Promise<void> }
let gateway: RunningGateway
let base: string
let adminBase: string
/** Public requests sent, to compare with the request lines written. */
let publicRequests = 0

beforeAll(async () => {
  dir = embeddedDataDir('logging')
  const { env, gatewayPort: gw, adminPort: admin } = await stackEnv(dir, { KIGO_ADMIN_TOKEN: `adm-${randomBytes(24).toString('base64url')}`, LOG_LEVEL: 'trace' })
  config = loadConfig({
    env,
    overrides: { gateway: { host: '127.0.0.1' } },
  })
  keep(config.adminToken, config.secretKey)
  core = await startCore(config, { logger: false })
  gateway = await startGateway(config, { logStream: stream })
  base = `http://localhost:${gw}`
  adminBase = `http://127.0.0.1:${admin}`
})

afterAll(async () => {
  await gateway?.close()
  await core?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function admin(method: string, path: string, body?: unknown, token = config.adminToken) {
  const res = await fetch(adminBase + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

async function update(headers: Record<string, string>, body = 'status=hello', query = '') {
  publicRequests += 1
  const res = await fetch(`${base}/api/statuses/update.json${query}`, { method: 'POST', headers: { ...form, ...headers }, body })
  await res.arrayBuffer()
  return res.status
}

describe('gateway logs', () => {
  let client: OAuthClient

  beforeAll(async () => {
    const loginPassword = `login-${randomBytes(12).toString('hex')}`
    keep(loginPassword)
    const user = await admin('POST', '/admin/users', { id: 'logan', name: 'Logan', password: loginPassword })
    expect(user.status).toBe(201)
    keep(user.body.api_password)
    const app = await admin('POST', '/admin/apps', { name: 'Log App', owner: 'logan', scopes: ['write_public'] })
    keep(app.body.consumer_secret)
    const token = await admin('POST', '/admin/tokens', { consumer: app.body.consumer_key, user: 'logan', scopes: ['write_public'] })
    keep(token.body.token_secret)
    client = { consumerKey: app.body.consumer_key, consumerSecret: app.body.consumer_secret, token: token.body.token, tokenSecret: token.body.token_secret }
    const apiPassword: string = user.body.api_password

    // Operator mistakes: a wrong bearer token, a password inside a body that is not JSON.
    const wrongAdmin = `wrong-admin-${randomBytes(8).toString('hex')}`
    keep(wrongAdmin)
    expect((await admin('GET', '/admin/usage', undefined, wrongAdmin)).status).toBe(401)
    const inBadJson = `badjson-${randomBytes(8).toString('hex')}`
    keep(inBadJson)
    expect((await admin('POST', '/admin/users', `{"id":"x1x","password":"${inBadJson}"`)).status).toBe(400)
    expect((await admin('PUT', '/admin/policy', { basic: { state: 'deprecate' } })).status).toBe(200)

    // Basic: right and wrong.
    const basicOk = basicHeader('logan', apiPassword)
    const wrongPassword = `wrong-${randomBytes(8).toString('hex')}`
    const basicBad = basicHeader('logan', wrongPassword)
    keep(wrongPassword, basicOk.authorization!.slice(6), basicBad.authorization!.slice(6))
    expect(await update(basicOk)).toBe(200)
    expect(await update(basicBad)).toBe(401)

    // WSSE: right, replayed, wrong password.
    const wsseOk = wsseHeader('logan', apiPassword, Date.now())
    const wsseBad = wsseHeader('logan', apiPassword, Date.now(), wrongPassword)
    for (const h of [wsseOk, wsseBad]) keep(/PasswordDigest="([^"]+)"/.exec(h['x-wsse']!)![1]!)
    expect(await update(wsseOk)).toBe(200)
    expect(await update(wsseOk)).toBe(401)
    expect(await update(wsseBad)).toBe(401)

    // OAuth: in the header, in the query string, and with a bad signature.
    const url = `${base}/api/statuses/update.json`
    const oauthOk = oauthHeader(client, { url, method: 'POST', data: { status: 'hello' } }, Date.now())
    const wrongSecret = { ...client, consumerSecret: `x${randomBytes(8).toString('hex')}` }
    const oauthBad = oauthHeader(wrongSecret, { url, method: 'POST', data: { status: 'hello' } }, Date.now())
    for (const h of [oauthOk, oauthBad]) keep(decodeURIComponent(/oauth_signature="([^"]+)"/.exec(h.authorization!)![1]!))
    expect(await update(oauthOk)).toBe(200)
    expect(await update(oauthBad)).toBe(401)
    const params = new URLSearchParams(/^OAuth (.*)$/.exec(oauthHeader(client, { url, method: 'POST', data: { status: 'in query' } }, Date.now()).authorization!)![1]!
      .split(', ').map((p) => { const [k, v] = p.split('='); return [k!, decodeURIComponent(v!.slice(1, -1))] }))
    keep(params.get('oauth_signature')!)
    expect(await update({}, 'status=in+query', `?${params.toString()}`)).toBe(200)

    // Dashboard sign-in: wrong token, right token, and the session cookie it sets.
    const login = (token: string) => fetch(`${adminBase}/admin/login`, { method: 'POST', headers: form, body: new URLSearchParams({ token }), redirect: 'manual' })
    expect((await login(wrongAdmin)).status).toBe(401)
    const signedIn = await login(config.adminToken)
    expect(signedIn.status).toBe(303)
    const cookie = /kigo_admin_session=([^;]+)/.exec(signedIn.headers.get('set-cookie') ?? '')![1]!
    keep(cookie)
    expect((await fetch(`${adminBase}/admin/`, { headers: { cookie: `kigo_admin_session=${cookie}` } })).status).toBe(200)
    // Let pino's writes land.
    await new Promise((r) => setTimeout(r, 100))
  })

  const records = () => lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)

  it('writes a start-up line with the URLs and where the admin token came from', () => {
    const start = records().find((r) => typeof r.msg === 'string' && r.msg.startsWith('gateway listening'))
    expect(start).toMatchObject({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      adminUrl: adminBase,
      coreUrl: config.gateway.coreUrl,
      adminTokenFrom: 'the KIGO_ADMIN_TOKEN environment variable',
    })
    expect(start!.msg).toContain(`operator API, dashboard and metrics on ${adminBase}`)
  })

  it('writes JSON lines only', () => {
    expect(lines.length).toBeGreaterThan(0)
    expect(() => records()).not.toThrow()
  })

  it('writes one line per public request with the fields of docs/gateway.md#metrics', () => {
    // Each key once: log pipelines may reject or mangle a line with a repeated key.
    for (const line of lines.join('').split('\n').filter((l) => l.includes('"msg":"request"'))) {
      expect(line.match(/"reqId":/g)).toHaveLength(1)
    }
    const requests = records().filter((r) => r.msg === 'request')
    expect(requests).toHaveLength(publicRequests)
    for (const r of requests) {
      expect(typeof r.reqId).toBe('string')
      expect(r.route).toBe('statuses/update')
      expect(typeof r.status).toBe('number')
      expect(typeof r.ms).toBe('number')
      expect(typeof r.outcome).toBe('string')
    }
    const summary = requests.map((r) => [r.auth, r.user ?? '-', r.consumer ?? '-', r.outcome, r.status].join(' '))
    expect(summary).toEqual([
      'basic logan - ok 200',
      'basic logan - bad_credentials 401',
      'wsse logan - ok 200',
      'wsse logan - replay 401',
      'wsse logan - bad_credentials 401',
      `oauth logan ${client.consumerKey} ok 200`,
      'oauth logan - bad_signature 401',
      `oauth logan ${client.consumerKey} ok 200`,
    ])
    expect(new Set(requests.map((r) => r.reqId)).size).toBe(publicRequests)
  })

  it('never writes a credential, password, secret, signature or session', () => {
    const all = lines.join('')
    expect(secrets.size).toBeGreaterThanOrEqual(15)
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(8)
      for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)])) {
        expect(all.includes(form), `a secret (${secret.slice(0, 3)}…) appears in the log`).toBe(false)
      }
    }
  })
})

// Last: these requests are not public API requests and would change the counts above.
describe('health checks', () => {
  it('logs health checks at debug, other requests at info', async () => {
    const count = (level: number) => lines.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.msg === 'request' && r.level === level).length
    const [debugBefore, infoBefore] = [count(20), count(30)]
    for (const path of ['/healthz', '/readyz']) await (await fetch(base + path)).arrayBuffer()
    expect(count(20)).toBe(debugBefore + 2)
    expect(count(30)).toBe(infoBefore)
  })
})
