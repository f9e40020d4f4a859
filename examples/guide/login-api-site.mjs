// A site that signed people in with the login API, signing them in with OAuth 1.0a and
// reading who they are from applications/my instead (oauth-1.0a: npm install oauth-1.0a).
//   KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… CALLBACK=https://your.site/login/callback node login-api-site.mjs start
//     (instead of redirecting the visitor to /auth?api_key=…&api_sig=…)
//   … REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… node login-api-site.mjs finish
//     (in your callback, instead of exchanging `cert` at /api/auth.json)
import { createHmac } from 'node:crypto'
import OAuth from 'oauth-1.0a'

const kigo = process.env.KIGO ?? 'http://localhost:8080'
const oauth = new OAuth({
  consumer: { key: process.env.CONSUMER_KEY, secret: process.env.CONSUMER_SECRET },
  signature_method: 'HMAC-SHA1',
  hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
})

async function send(method, url, token, oauthParams = {}) {
  const headers = oauth.toHeader(oauth.authorize({ url, method, data: oauthParams }, token))
  const res = await fetch(url, { method, headers })
  const text = await res.text()
  if (!res.ok) throw new Error(`${res.status} ${text}`)
  return text
}

if (process.argv[2] === 'start') {
  // Keep the request token's secret with the visitor's session, then send them to `authorize`.
  const creds = new URLSearchParams(await send('POST', `${kigo}/oauth/initiate`, undefined, { oauth_callback: process.env.CALLBACK }))
  console.log(`oauth_token=${creds.get('oauth_token')}\noauth_token_secret=${creds.get('oauth_token_secret')}`)
  console.log(`authorize=${kigo}/oauth/authorize?oauth_token=${creds.get('oauth_token')}`)
} else if (process.argv[2] === 'finish') {
  // Your callback receives oauth_token and oauth_verifier (the login API sent `cert`).
  const requestToken = { key: process.env.REQUEST_TOKEN, secret: process.env.REQUEST_SECRET }
  const creds = new URLSearchParams(await send('POST', `${kigo}/oauth/token`, requestToken, { oauth_verifier: process.env.VERIFIER }))
  const token = { key: creds.get('oauth_token'), secret: creds.get('oauth_token_secret') }
  // Who signed in: what /api/auth.json answered, from applications/my.
  const me = JSON.parse(await send('GET', `${kigo}/applications/my.json`, token))
  console.log(`name=${me.url_name}`)
  console.log(`image_url=${me.profile_image_url}`)
  // The login API's second icon is the same URL with profile_s.png.
  console.log(`thumbnail_url=${me.profile_image_url.replace(/profile\.png$/, 'profile_s.png')}`)
} else {
  console.error('usage: node login-api-site.mjs start|finish')
  process.exit(2)
}
