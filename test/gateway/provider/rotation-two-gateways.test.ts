// A consumer secret rotated on one gateway is seen at once on another (two gateways on
// one PostgreSQL, docs/gateway.md#rotating-a-secret): the other gateway holds the consumer
// in its cache, and a signature that fails against the cached entry is checked once more
// against the store, so the new secret works there at once; the old one keeps working as
// long as the overlap says. Absent PostgreSQL skips this outside CI and fails it under CI=true.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { startStack, type Stack } from '../../helpers/stack.js'
import { request } from 'undici'
import { oauthHeader } from './helpers.js'

const pg = await freshPostgres()

describe.skipIf(!pg)('a consumer secret rotated on one of two gateways', () => {
  let a: Stack
  let b: Stack
  let app: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }

  beforeAll(async () => {
    const shared = { databaseUrl: pg!.url, secretKey: randomBytes(32).toString('base64'), adminToken: randomBytes(24).toString('base64url') }
    a = await startStack(shared)
    b = await startStack({ ...shared, coreUrl: a.coreUrl })
    await a.addUser('alice', 'Alice')
    app = await a.addOAuthClient('alice', ['write_public'])
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await pg?.drop()
  })

  /** An entry posted through `target`, signed with the consumer secret `secret`, for the deployment both gateways serve (`a`'s host). */
  const postOn = async (target: Stack, secret: string) => {
    const url = `${a.url}/api/statuses/update.json`
    const form = { status: 'kigo=rotation' }
    const authorization = oauthHeader({ url, consumer: { key: app.consumerKey, secret }, token: { token: app.token, secret: app.tokenSecret }, form })
    // undici's request (unlike fetch) sends the Host header given.
    const res = await request(`${target.globalUrl}/api/statuses/update.json`, {
      method: 'POST',
      headers: { host: new URL(a.url).host, authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    })
    await res.body.dump()
    return res.statusCode
  }

  it('works on the other gateway at once with the new secret, and with the old one while the overlap lasts', async () => {
    // Gateway B has the consumer in its cache.
    expect(await postOn(b, app.consumerSecret)).toBe(200)
    const rotated = await a.admin<{ consumer_secret: string }>('POST', `/admin/apps/${app.consumerKey}/rotate-secret`, { overlap_seconds: 3600 })
    expect(rotated.status).toBe(200)
    expect(await postOn(b, rotated.body.consumer_secret)).toBe(200)
    expect(await postOn(b, app.consumerSecret)).toBe(200)
    expect(await postOn(a, app.consumerSecret)).toBe(200)

    // A store reload is spaced a second apart per consumer.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const none = await a.admin<{ consumer_secret: string }>('POST', `/admin/apps/${app.consumerKey}/rotate-secret`, { overlap_seconds: 0 })
    expect(await postOn(b, none.body.consumer_secret)).toBe(200)
    // B read the store again: the secrets replaced without overlap no longer work there either.
    expect(await postOn(b, rotated.body.consumer_secret)).toBe(401)
    expect(await postOn(b, app.consumerSecret)).toBe(401)
    expect(await postOn(a, rotated.body.consumer_secret)).toBe(401)
  })
})
