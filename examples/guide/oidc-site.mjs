// A site that signs its visitors in with their kigo account over OpenID Connect: the
// authorization code flow with PKCE, with the openid-client library (npm install
// openid-client), Node 20 or later. Register the site first (an operator runs
// `npx kigo oidc-clients add "My site" --owner YOU --redirect-uri http://127.0.0.1:3000/callback`),
// then:
//
//   KIGO=http://localhost:8080 CLIENT_ID=… CLIENT_SECRET=… node oidc-site.mjs
//
// and open http://127.0.0.1:3000/. Leave CLIENT_SECRET out for a public client.
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import * as oidc from 'openid-client'

const issuer = new URL(process.env.KIGO ?? 'http://localhost:8080')
const port = Number(process.env.PORT ?? 3000)
const redirectUri = `http://127.0.0.1:${port}/callback`
const secret = process.env.CLIENT_SECRET

// Discovery: the endpoints and keys from ${KIGO}/.well-known/openid-configuration.
const config = await oidc.discovery(
  issuer,
  process.env.CLIENT_ID,
  secret ? { client_secret: secret } : undefined,
  secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
  // http is for a kigo on your own machine; drop this line for an https deployment.
  issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
)
// Verify the ID token's signature against the JWKS as well (kigo signs with RS256).
oidc.enableNonRepudiationChecks(config)

// Sign-ins in progress, by a random id kept in a cookie: the PKCE verifier, state and nonce.
const pending = new Map()

const cookieOf = (req, name) => new Map((req.headers.cookie ?? '').split(/;\s*/).map((c) => c.split('='))).get(name)
const page = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
  res.end(`<!doctype html><meta charset="utf-8"><title>My site</title>${body}`)
}
const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

createServer(async (req, res) => {
  const url = new URL(req.url, redirectUri)
  try {
    if (url.pathname === '/') return page(res, 200, '<a href="/login">Sign in with kigo</a>')

    if (url.pathname === '/login') {
      const verifier = oidc.randomPKCECodeVerifier()
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      const id = randomBytes(16).toString('hex')
      pending.set(id, { verifier, state, nonce })
      const to = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      res.writeHead(302, { location: to.href, 'set-cookie': `signin=${id}; Path=/; HttpOnly; SameSite=Lax` })
      return res.end()
    }

    if (url.pathname === '/callback') {
      const id = cookieOf(req, 'signin')
      const started = id && pending.get(id)
      if (!started) return page(res, 400, 'No sign-in in progress. <a href="/login">Start again</a>.')
      pending.delete(id)
      // Checks the state, exchanges the code with the PKCE verifier, verifies the ID token.
      const tokens = await oidc.authorizationCodeGrant(config, url, { pkceCodeVerifier: started.verifier, expectedState: started.state, expectedNonce: started.nonce })
      const claims = tokens.claims()
      const user = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
      return page(
        res,
        200,
        `<p>Signed in as <strong>${escape(user.name)}</strong> (<span id="sub">${escape(user.sub)}</span>).</p>` +
          `<p><img src="${escape(user.picture)}" alt="" width="64" height="64"> <a href="${escape(user.profile)}">profile</a></p>`,
      )
    }
    page(res, 404, 'Not found')
  } catch (err) {
    // A refused sign-in (Deny, a wrong state, an expired code): say why, never crash.
    const reason = err.error_description ?? (err.cause instanceof Error ? err.cause.message : err.message)
    page(res, 400, `Sign-in failed: ${escape(reason)}`)
  }
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`))
