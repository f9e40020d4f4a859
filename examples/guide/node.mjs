// kigo over OAuth 1.0a with the oauth-1.0a library (npm install oauth-1.0a), Node 20.
//   KIGO=http://localhost:8080 CONSUMER_KEY=… CONSUMER_SECRET=… node node.mjs initiate
//   … REQUEST_TOKEN=… REQUEST_SECRET=… VERIFIER=… node node.mjs token
//   … TOKEN=… TOKEN_SECRET=… node node.mjs read ENTRY_ID
//   … TOKEN=… TOKEN_SECRET=… node node.mjs post KEYWORD photo.png
//   … TOKEN=… TOKEN_SECRET=… node node.mjs status KEYWORD 'TEXT'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import OAuth from 'oauth-1.0a'

const kigo = process.env.KIGO ?? 'http://localhost:8080'
const oauth = new OAuth({
  consumer: { key: process.env.CONSUMER_KEY, secret: process.env.CONSUMER_SECRET },
  signature_method: 'HMAC-SHA1',
  hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
})
const [step, ...args] = process.argv.slice(2)

/** Sends a request signed with `token`; `form` parameters are signed, a FormData body is not. */
async function send(method, url, { token, oauthParams = {}, form, body } = {}) {
  const data = { ...form, ...oauthParams }
  const headers = oauth.toHeader(oauth.authorize({ url, method, data }, token))
  if (form) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams(form)
  }
  const res = await fetch(url, { method, headers, body })
  const text = await res.text()
  if (!res.ok) throw new Error(`${res.status} ${text}`)
  return text
}

if (step === 'initiate') {
  // Step 1: a request token, signed with the consumer credentials alone.
  const creds = new URLSearchParams(await send('POST', `${kigo}/oauth/initiate`, { oauthParams: { oauth_callback: process.env.CALLBACK ?? 'oob' } }))
  console.log(`oauth_token=${creds.get('oauth_token')}\noauth_token_secret=${creds.get('oauth_token_secret')}`)
  // Step 2: the user opens this page, allows, and is shown the code (oob).
  console.log(`authorize=${kigo}/oauth/authorize?oauth_token=${creds.get('oauth_token')}`)
} else if (step === 'token') {
  // Step 3: the request token and the user's code for an access token.
  const token = { key: process.env.REQUEST_TOKEN, secret: process.env.REQUEST_SECRET }
  const creds = new URLSearchParams(await send('POST', `${kigo}/oauth/token`, { token, oauthParams: { oauth_verifier: process.env.VERIFIER } }))
  console.log(`oauth_token=${creds.get('oauth_token')}\noauth_token_secret=${creds.get('oauth_token_secret')}`)
} else {
  const token = { key: process.env.TOKEN, secret: process.env.TOKEN_SECRET }
  if (step === 'read') {
    console.log(await send('GET', `${kigo}/api/statuses/show/${args[0]}.json`, { token }))
  } else if (step === 'status') {
    // A text status, the case most clients have: the form body's fields are signed too.
    console.log(await send('POST', `${kigo}/api/statuses/update.json`, { token, form: { keyword: args[0], status: args[1] } }))
  } else {
    // A multipart body (with the photo) is not signed: only the oauth_ parameters are.
    const body = new FormData()
    body.set('keyword', args[0])
    body.set('file', new Blob([readFileSync(args[1])]), basename(args[1]))
    console.log(await send('POST', `${kigo}/api/statuses/update.json`, { token, body }))
  }
}
