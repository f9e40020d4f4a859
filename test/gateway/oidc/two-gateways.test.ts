// Two gateways of one deployment on one PostgreSQL database, behind one balancer
// (docs/oidc.md#several-gateways): a sign-in started on one gateway finishes on the other,
// the code is redeemed on either, the ID token verifies against either's JWKS, and a key
// rotated on one is published and used by the other after its next poll.
import { randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { freePort, startStack, type Stack } from '../../helpers/stack.js'
import { browse, discover, oidc, registerClient, startSignIn, type RegisteredClient } from './helpers.js'

const pg = await freshPostgres()
const redirectUri = 'https://site.example/callback'

/** An HTTP balancer that sends each request, Host header unchanged, to the gateway `target` names. */
function balancer(ports: () => number): Server {
  return createServer((req, res) => {
    const upstream = httpRequest({ host: '127.0.0.1', port: ports(), method: req.method, path: req.url, headers: req.headers }, (answer) => {
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

describe.skipIf(!pg)('OpenID Connect on two gateways sharing PostgreSQL', () => {
  let a: Stack
  let b: Stack
  let lb: Server
  let issuer: string
  let target: 'a' | 'b' = 'a'
  let site: RegisteredClient
  let alice: { id: string; password: string }

  beforeAll(async () => {
    const lbPort = await freePort()
    issuer = `http://localhost:${lbPort}`
    const shared = {
      databaseUrl: pg!.url,
      secretKey: randomBytes(32).toString('base64'),
      adminToken: randomBytes(24).toString('base64url'),
      // Both gateways answer for the balancer's host: one deployment, one issuer.
      overrides: { domesticHost: `localhost:${lbPort}` },
    }
    a = await startStack(shared)
    // B looks for a rotated key every 2 s here (every 30 s by default).
    b = await startStack({ ...shared, coreUrl: a.coreUrl, oidcKeyPollMs: 2_000 })
    const portOf = (s: Stack) => s.config.gateway.port
    lb = balancer(() => (target === 'a' ? portOf(a) : portOf(b)))
    await new Promise<void>((r) => lb.listen(lbPort, '127.0.0.1', r))
    alice = await a.addUser('alice', 'Alice')
    site = await registerClient(a, { name: 'Tea Party', owner: 'alice', redirect_uris: [redirectUri] })
  })

  afterAll(async () => {
    await new Promise((r) => lb?.close(r))
    await b?.close()
    await a?.close()
    await pg?.drop()
  })

  it('a sign-in started on gateway A finishes on gateway B; the code is redeemed and userinfo answered on A', async () => {
    target = 'a'
    const config = await discover(issuer, site)
    const started = await startSignIn(config, redirectUri)
    const seen: string[] = []
    const { callback } = await browse(started.url, redirectUri, alice, {
      onPage: (path) => {
        seen.push(`${target} ${path.split('?')[0]}`)
        // Everything after the first answer (the redirect to the login step) goes to B.
        target = 'b'
      },
    })
    expect(seen[0]).toMatch(/^a \/oidc\/auth$/)
    expect(seen.slice(1).every((s) => s.startsWith('b '))).toBe(true)
    expect(seen.some((s) => s.includes('/oidc/interaction/'))).toBe(true)

    target = 'a'
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
    expect(tokens.claims()!.sub).toBe('alice')
    expect(tokens.claims()!.iss).toBe(issuer)
    target = 'b'
    const info = await oidc.fetchUserInfo(config, tokens.access_token, 'alice')
    expect(info.name).toBe('Alice')
    // A code redeemed on A is spent on B too.
    const again = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce }).catch((e: unknown) => e)
    expect((again as oidc.ResponseBodyError).error).toBe('invalid_grant')
  })

  it('both gateways published the one key generated at first start', async () => {
    target = 'a'
    const fromA = await (await fetch(`${issuer}/oidc/jwks`)).json()
    target = 'b'
    const fromB = await (await fetch(`${issuer}/oidc/jwks`)).json()
    expect(fromB).toEqual(fromA)
    expect((fromA as { keys: unknown[] }).keys).toHaveLength(1)
  })

  it('a key rotated through gateway A is used by gateway B after its next poll', async () => {
    target = 'a'
    const rotated = await a.admin<{ kid: string }>('POST', '/admin/oidc/rotate-key')
    expect(rotated.status).toBe(200)
    // B reloads the keys on its poll.
    target = 'b'
    const deadline = Date.now() + 10_000
    let kids: string[] = []
    while (Date.now() < deadline) {
      kids = ((await (await fetch(`${issuer}/oidc/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid)
      if (kids[0] === rotated.body.kid) break
      await new Promise((r) => setTimeout(r, 500))
    }
    expect(kids[0]).toBe(rotated.body.kid)
    expect(kids).toHaveLength(2)
  })
})
