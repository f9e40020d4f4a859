// OAuth 2.0 on two gateways of one deployment sharing PostgreSQL (docs/oauth2.md#several-gateways):
// a token issued through gateway A is taken by gateway B, which verifies it alone, on the
// deployment's alias too and never on the other deployment's host; a revocation made
// through A is refused by B within 5 s, with Redis carrying the news and without it (the
// database polled). The token exchange across the two: exchanged at A, used at B,
// exchanged again at B, the first access token refused at A.
import { randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { availableRedis, freshPostgres } from '../../helpers/services.js'
import { freePort, startStack, type Stack } from '../../helpers/stack.js'
import { bearer, codeFlow, discoverOAuth, issueOAuth1Token, oidc, rawRequest, registerApiClient, registerExchangeApp, signedExchangeBody, tokenPost, type RegisteredClient } from './helpers.js'

const pg = await freshPostgres()
const redis = await availableRedis()
// One deployment: the same secrets for every gateway of it, as its signing keys are sealed with them.
const secretKey = randomBytes(32).toString('base64')
const adminToken = randomBytes(24).toString('base64url')
/** The deployment's alias, and the other deployment's host: both reach the gateways through the balancer. */
const alias = 'alias.kigo.test'
const otherDeployment = 'global.kigo.test'
const timeline = '/api/statuses/user_timeline.json'

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
        overrides: { domesticHost: `localhost:${lbPort}`, domesticHostAliases: [alias], globalHost: otherDeployment },
      }
      a = await startStack(common)
      b = await startStack({ ...common, coreUrl: a.coreUrl })
      lb = balancer(() => (target === 'a' ? a : b).config.gateway.port)
      await new Promise<void>((r) => lb.listen(lbPort, '127.0.0.1', r))
      const suffix = shared.redisUrl ? 'r' : 'd'
      alice = await a.addUser(`alice${suffix}`, 'Alice')
      client = await registerApiClient(a, { name: `Glass ${suffix}`, owner: alice.id, scopes: ['read_public', 'write_public'] })
    })

    /** Polls `token` at the gateway `target` names until it is refused, for at most 5 s from `since`: the last status, and when. */
    async function untilRefused(token: string, since: number): Promise<{ status: number; after: number }> {
      let status = 200
      while (Date.now() - since < 5_000) {
        status = (await bearer(issuer, 'GET', timeline, token)).status
        if (status === 401) break
        await new Promise((r) => setTimeout(r, 100))
      }
      return { status, after: Date.now() - since }
    }

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
      const refused = await untilRefused(tokens.access_token, revokedAt)
      expect(refused.status).toBe(401)
      expect(refused.after).toBeLessThan(5_000)
    }, 30_000)

    it('a token issued through A is taken by B on the deployment\'s alias, refused there on the other deployment\'s host; discovery through the alias names the same issuer', async () => {
      target = 'a'
      const tokens = await codeFlow(await discoverOAuth(issuer, client), alice, 'read_public write_public')
      target = 'b'
      expect((await bearer(issuer, 'GET', timeline, tokens.access_token, undefined, alias)).status).toBe(200)
      const elsewhere = await bearer(issuer, 'POST', '/api/statuses/update.json', tokens.access_token, { status: 'Sent to the other deployment' }, otherDeployment)
      expect(elsewhere.status).toBe(401)
      expect(elsewhere.challenge).toContain('error="invalid_token"')
      expect(JSON.stringify((await bearer(issuer, 'GET', timeline, tokens.access_token)).body)).not.toContain('Sent to the other deployment')
      const metadata = JSON.parse((await rawRequest(issuer, 'GET', '/.well-known/oauth-authorization-server', [], undefined, alias)).text) as { issuer: string; token_endpoint: string }
      expect(metadata).toMatchObject({ issuer, token_endpoint: `${issuer}/oidc/token` })
    }, 30_000)

    it('an OAuth 1.0a token exchanged at A calls through B; exchanged again at B, A refuses the first access token within 5 s and the first exchange replayed is invalid_grant', async () => {
      const suffix = shared.redisUrl ? 'r' : 'd'
      const tokenEndpoint = `${issuer}/oidc/token`
      const app = await registerExchangeApp(a, `Poster ${suffix}`, alice.id, ['read_public', 'write_public'])
      const stored = await issueOAuth1Token(a, app, alice.id, ['read_public', 'write_public'])
      target = 'a'
      const firstBody = signedExchangeBody(tokenEndpoint, app, stored)
      const first = await tokenPost(tokenEndpoint, app, firstBody)
      expect(first.status).toBe(200)
      const firstToken = first.body.access_token as string
      target = 'b'
      expect((await bearer(issuer, 'POST', '/api/statuses/update.json', firstToken, { status: `Exchanged at A, posted through B (${suffix})` })).status).toBe(200)
      const second = await tokenPost(tokenEndpoint, app, signedExchangeBody(tokenEndpoint, app, stored))
      expect(second.status).toBe(200)
      const exchangedAt = Date.now()
      target = 'a'
      const refused = await untilRefused(firstToken, exchangedAt)
      expect(refused.status).toBe(401)
      expect(refused.after).toBeLessThan(5_000)
      expect((await bearer(issuer, 'GET', timeline, second.body.access_token as string)).status).toBe(200)
      // The nonce of the first exchange is claimed in the replay cache: shared through Redis,
      // so B refuses it too; without Redis each gateway keeps its own, and A, which claimed it, refuses it.
      target = shared.redisUrl ? 'b' : 'a'
      const replayed = await tokenPost(tokenEndpoint, app, firstBody)
      expect(replayed.status).toBe(400)
      expect(replayed.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('nonce') })
    }, 30_000)
  })
}
