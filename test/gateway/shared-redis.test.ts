// Production topology in one process: two gateways sharing one PostgreSQL and one Redis
// (docs/operations.md#modes, docs/operations.md#dependability). A nonce used at one gateway is refused at the other; when Redis goes
// away nonce-checked requests fail closed (503, counted) while Basic keeps working, and
// the gateways recover by themselves when Redis returns.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { oauth1aClient } from '../helpers/oauth1a.js'
import { request } from 'undici'
import wsse from 'wsse'
import { freshPostgres } from '../helpers/services.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { PrivateRedis, eventually } from '../helpers/private-redis.js'

const pg = await freshPostgres()

describe.skipIf(!pg)('two gateways on one Redis', () => {
  let redis: PrivateRedis
  let a: Stack
  let b: Stack
  let client: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }
  let apiPassword: string

  beforeAll(async () => {
    redis = await PrivateRedis.start()
    const shared = { databaseUrl: pg!.url, redisUrl: redis.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    a = await startStack(shared)
    b = await startStack({ ...shared, coreUrl: a.coreUrl })
    apiPassword = (await a.addUser('carol', 'Carol')).api_password
    client = await a.addOAuthClient('carol', ['write_public'])
  })

  afterAll(async () => {
    await b?.close()
    await a?.close()
    await redis?.kill()
    await pg?.drop()
  })

  const signer = () => oauth1aClient({ key: client.consumerKey, secret: client.consumerSecret })

  /** One signed request, sent to `target` with the Host of `a` (one deployment, two gateways). */
  function signed(status: string) {
    const url = `${a.url}/api/statuses/update.json`
    const data = { status }
    const auth = signer().toHeader(signer().authorize({ url, method: 'POST', data }, { key: client.token, secret: client.tokenSecret })).Authorization
    // undici's request (unlike fetch) sends the Host header given: both gateways serve the
    // deployment `a.url` names.
    return async (target: Stack) => {
      const res = await request(`${target.globalUrl}/api/statuses/update.json`, {
        method: 'POST',
        headers: { host: new URL(a.url).host, authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(data).toString(),
      })
      const text = await res.body.text()
      return { status: res.statusCode, headers: res.headers, json: async () => JSON.parse(text) }
    }
  }

  it('refuses at the second gateway an OAuth nonce used at the first', async () => {
    const send = signed('shared nonce')
    expect((await send(a)).status).toBe(200)
    const again = await send(b)
    expect(again.status).toBe(401)
    expect((await again.json()).error.code).toBe('nonce_used')
  })

  it('refuses at the second gateway a WSSE nonce used at the first', async () => {
    const header = wsse({ username: 'carol', password: apiPassword }).getWSSEHeader({ nonceBase64: true })
    const send = async (target: Stack) => {
      const res = await request(`${target.globalUrl}/api/statuses/update.json`, {
        method: 'POST',
        headers: { host: new URL(a.url).host, 'x-wsse': header, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'status=wsse+shared',
      })
      await res.body.dump()
      return res.statusCode
    }
    expect(await send(a)).toBe(200)
    expect(await send(b)).toBe(401)
  })

  it('fails closed while Redis is away, counts it, keeps Basic working, and recovers', async () => {
    await redis.kill()
    const res = await signed('while away')(a)
    expect(res.status).toBe(503)
    expect(String(res.headers['retry-after'])).toMatch(/^[0-9]+$/)
    expect((await res.json()).error.status).toBe(503)

    const metrics = await (await fetch(`${a.adminUrl}/metrics`)).text()
    // Every method's series exists from start-up (at zero); this request was OAuth.
    const errors = /^kigo_replay_cache_errors_total\{method="oauth"\} ([0-9.]+)$/m.exec(metrics)
    expect(Number(errors?.[1] ?? 0)).toBeGreaterThan(0)
    expect(metrics).toMatch(/kigo_auth_requests_total\{[^}]*method="oauth"[^}]*outcome="unavailable"[^}]*\} 1/)

    const viaBasic = await fetch(`${a.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { authorization: 'Basic ' + Buffer.from(`carol:${apiPassword}`).toString('base64'), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=basic+still+works',
    })
    expect(viaBasic.status).toBe(200)

    await redis.start()
    // The same gateway, not restarted, answers again once Redis is back.
    await eventually(async () => (await signed(`back ${randomBytes(4).toString('hex')}`)(a)).status === 200, 10_000)
  })
})
