// kigo over OAuth 2.0 with openid-client (npm install openid-client), Node 20 or later:
// a public client (an app on the user's machine, no secret), the authorization code with PKCE.
//   export KIGO=http://localhost:8080 CLIENT_ID=… REDIRECT_URI=http://127.0.0.1:8000/callback
//   node oauth2-node.mjs login          # prints the page to open; paste the address you land on
//   ACCESS_TOKEN=… node oauth2-node.mjs post KEYWORD 'TEXT'     # needs write_public
//   ACCESS_TOKEN=… node oauth2-node.mjs read ENTRY_ID           # needs read_public
//   REFRESH_TOKEN=… node oauth2-node.mjs refresh                 # a new access token (and refresh token)
//   TOKEN=… node oauth2-node.mjs revoke                          # the access or refresh token: the whole grant ends
import { createInterface } from 'node:readline/promises'
import * as client from 'openid-client'

const kigo = new URL(process.env.KIGO ?? 'http://localhost:8080')
const redirectUri = process.env.REDIRECT_URI ?? 'http://127.0.0.1:8000/callback'
const scope = process.env.SCOPE ?? 'read_public write_public'
const [step, ...args] = process.argv.slice(2)

// The endpoints come from kigo's metadata (RFC 8414). A public client authenticates with
// its client_id alone (None); http is allowed for a development instance only.
const config = await client.discovery(kigo, process.env.CLIENT_ID, undefined, client.None(), {
  algorithm: 'oauth2',
  execute: kigo.protocol === 'http:' ? [client.allowInsecureRequests] : [],
})

function show(tokens) {
  for (const name of ['access_token', 'refresh_token', 'scope', 'expires_in']) console.log(`${name}=${tokens[name] ?? ''}`)
}

if (step === 'login') {
  // PKCE (S256): the verifier stays here, its hash goes with the user to kigo.
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })
  // The user opens this page, signs in and allows; kigo then sends the browser to
  // REDIRECT_URI with ?code=…&state=…. Nothing needs to listen there: copy the address.
  console.log(`authorize=${url.href}`)
  const input = createInterface({ input: process.stdin, output: process.stderr })
  const landed = await input.question('Paste the address your browser was sent to:\n')
  input.close()
  // Checks the state, and sends the code with the verifier.
  show(await client.authorizationCodeGrant(config, new URL(landed.trim()), { pkceCodeVerifier: verifier, expectedState: state }))
} else if (step === 'refresh') {
  // Each refresh answers a new refresh token: keep it; the old one is spent.
  show(await client.refreshTokenGrant(config, process.env.REFRESH_TOKEN))
} else if (step === 'revoke') {
  // Revoking either token of a grant ends the whole grant: its access and refresh tokens.
  await client.tokenRevocation(config, process.env.TOKEN)
  console.log('revoked')
} else {
  // Authorization: Bearer ACCESS_TOKEN on each API call.
  const call = step === 'post'
    ? client.fetchProtectedResource(config, process.env.ACCESS_TOKEN, new URL('/api/statuses/update.json', kigo), 'POST',
      new URLSearchParams({ keyword: args[0], status: args[1] }), new Headers({ 'content-type': 'application/x-www-form-urlencoded' }))
    : client.fetchProtectedResource(config, process.env.ACCESS_TOKEN, new URL(`/api/statuses/show/${args[0]}.json`, kigo), 'GET')
  // A refusal comes with a WWW-Authenticate challenge, which the library throws.
  const res = await call.catch((err) => {
    if (err instanceof client.WWWAuthenticateChallengeError) return err.response
    throw err
  })
  const text = await res.text()
  if (!res.ok) {
    // 401 invalid_token: refresh, or log in again; 403 insufficient_scope: ask for the scope.
    console.error(`${res.status} ${res.headers.get('www-authenticate') ?? ''} ${text}`)
    process.exit(1)
  }
  console.log(text)
}
