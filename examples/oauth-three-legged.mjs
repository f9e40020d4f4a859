// The OAuth 1.0a three-legged flow against kigo, runnable as pasted (Node 20, npm
// install oauth-1.0a): gets a request token, asks the user to open the authorize page
// and type the code kigo shows (oob), exchanges it for an access token, and prints it.
//
//   node examples/oauth-three-legged.mjs http://localhost:8080 CONSUMER_KEY CONSUMER_SECRET
import { createHmac } from 'node:crypto'
import { createInterface } from 'node:readline/promises'
import OAuth from 'oauth-1.0a'

const [kigo, key, secret] = process.argv.slice(2)
if (!kigo || !key || !secret) {
  console.error('usage: node oauth-three-legged.mjs KIGO_URL CONSUMER_KEY CONSUMER_SECRET')
  process.exit(2)
}
const oauth = new OAuth({
  consumer: { key, secret },
  signature_method: 'HMAC-SHA1',
  hash_function: (base, k) => createHmac('sha1', k).update(base).digest('base64'),
})

/** POSTs to a token endpoint, signed; returns the form-encoded answer. */
async function tokenRequest(url, token, oauthParams) {
  const headers = oauth.toHeader(oauth.authorize({ url, method: 'POST', data: oauthParams }, token))
  const res = await fetch(url, { method: 'POST', headers })
  const text = await res.text()
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text}`)
  return new URLSearchParams(text)
}

// 1. A request token, signed with the consumer credentials alone; oob: the user gets a code.
const request = await tokenRequest(`${kigo}/oauth/initiate`, undefined, { oauth_callback: 'oob' })
const requestToken = { key: request.get('oauth_token'), secret: request.get('oauth_token_secret') }

// 2. The user allows the application and reads the code off the page.
console.log(`Open this page, sign in and allow the application:\n\n  ${kigo}/oauth/authorize?oauth_token=${requestToken.key}\n`)
const rl = createInterface({ input: process.stdin, output: process.stdout })
const verifier = (await rl.question('Code shown: ')).trim()
rl.close()

// 3. The request token and the code for an access token.
const access = await tokenRequest(`${kigo}/oauth/token`, requestToken, { oauth_verifier: verifier })
console.log(`\naccess token:        ${access.get('oauth_token')}\naccess token secret: ${access.get('oauth_token_secret')}`)
console.log(`\nPost with it:\n  node examples/oauth-post.mjs ${kigo}/api/statuses/update.json ${key} ${secret} ${access.get('oauth_token')} ${access.get('oauth_token_secret')} 'haiku=first post over OAuth'`)
