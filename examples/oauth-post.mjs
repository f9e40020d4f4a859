// Posts an entry with OAuth 1.0a (HMAC-SHA1), signed by the oauth-1.0a library: the same
// URL and arguments a Basic or WSSE client sends, only the credentials change.
//   node examples/oauth-post.mjs URL CONSUMER_KEY CONSUMER_SECRET TOKEN TOKEN_SECRET 'keyword=text'
import { createHmac } from 'node:crypto'
import OAuth from 'oauth-1.0a'

const [url, consumerKey, consumerSecret, token, tokenSecret, status] = process.argv.slice(2)
if (!status) {
  console.error('usage: node examples/oauth-post.mjs URL CONSUMER_KEY CONSUMER_SECRET TOKEN TOKEN_SECRET STATUS')
  process.exit(2)
}
const oauth = new OAuth({
  consumer: { key: consumerKey, secret: consumerSecret },
  signature_method: 'HMAC-SHA1',
  hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
})
const data = { status }
const { Authorization } = oauth.toHeader(oauth.authorize({ url, method: 'POST', data }, { key: token, secret: tokenSecret }))
const res = await fetch(url, {
  method: 'POST',
  headers: { authorization: Authorization, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(data),
})
console.log(res.status, await res.text())
process.exitCode = res.ok ? 0 : 1
