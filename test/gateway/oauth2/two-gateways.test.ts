// OAuth 2.0 on two gateways of one deployment sharing PostgreSQL (docs/oauth2.md#several-gateways):
// a token issued through gateway A is taken by gateway B, which verifies it alone; a
// revocation made through A is refused by B within 5 s, with Redis carrying the news and
// without it (the database polled).
import { randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableRedis, freshPostgres } from '../../helpers/services.js'
import { freePort, startStack, type Stack } from '../../helpers/stack.js'
import { bearer, codeFlow, discoverOAuth, oidc, registerApiClient, type RegisteredClient } from './helpers.js'

const pg = await freshPostgres()
const redis = await availableRedis()
// One deployment: the same secrets for every gateway of it, as its signing keys are sealed with them.
const secretKey = randomBytes(32).toString('base64')
const adminToken = randomBytes(24).toString('base64url')

/** An HTTP balancer that sends each request, Host header unchanged, to the gateway `port()` names. */
function balancer(port: () => number): Server {
  return createServer((req, res) => {
    const upstream = httpRequest({ host: '127.0.0.1', port: port(), method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => {
      res.statusCode = 502
      res.end()
    })
    req.pipe(upstream)
  })
}

afterAll(async () => {
  await pg?.drop()
})

for (const shared of [{ name: 'with Redis', redisUrl: redis, skip: redis === null }, { name: 'without Redis (the database polled)', redisUrl: null, skip: false }]) {
  describe.skipIf(!pg || shared.skip)(`OAuth 2.0 on two gateways sharing PostgreSQL, ${shared.name}`, () => {
    let a: Stack
    let b: Stack
    let lb: Server
    let issuer: string
    let target: 'a' | 'b' = 'a'
    let client: RegisteredClient
    let alice: { id: string; password: string }

    beforeAll(async () => {
      const lbPort = await freePort()
      issuer = `http://localhost:${lbPort}`
      const common = {
        databaseUrl: pg!.url,
        ...(shared.redisUrl ? { redisUrl: shared.redisUrl } : {}),
        secretKey,
        adminToken,
        overrides: { domesticHost: `localhost:${lbPort}` },
      }
      a = await startStack(common)
      b = await startStack({ ...common, coreUrl: a.coreUrl })
      lb = balancer(() => (target === 'a' ? a : b).config.gateway.port)
      await new Promise<void>((r) => lb.listen(lbPort, '127.0.0.1', r))
      const suffix = shared.redisUrl ? 'r' : 'd'
      alice = await a.addUser(`alice${suffix}`, 'Alice')
      client = await registerApiClient(a, { name: `Glass ${suffix}`, owner: alice.id, scopes: ['read_public', 'write_public'] })
    })

    afterAll(async () => {
      await new Promise((r) => lb?.close(r))
      await b?.close()
      await a?.close()
    })

    it('a token issued through A is taken by B; revoked through A, B refuses it within 5 s', async () => {
      target = 'a'
      const config = await discoverOAuth(issuer, client)
      const tokens = await codeFlow(config, alice, 'read_public write_public')
      target = 'b'
      expect((await bearer(issuer, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status).toBe(200)
      target = 'a'
      await oidc.tokenRevocation(config, tokens.access_token)
      const revokedAt = Date.now()
      expect((await bearer(issuer, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status).toBe(401)
      target = 'b'
      let status = 200
      while (Date.now() - revokedAt < 5_000) {
        status = (await bearer(issuer, 'GET', '/api/statuses/user_timeline.json', tokens.access_token)).status
        if (status === 401) break
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(status).toBe(401)
      expect(Date.now() - revokedAt).toBeLessThan(5_000)
    }, 30_000)
  })
}
