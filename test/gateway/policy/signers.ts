// Credentials for the three methods at a given clock (the gateway under test runs on an
// injected clock, so WSSE `Created` and OAuth timestamps follow it). OAuth is signed by
// the independent oauth-1.0a library; WSSE digests are computed here per docs/gateway.md#wsse-usernametoken.
import { createHash, randomBytes } from 'node:crypto'
import { oauth1aClient } from '../../helpers/oauth1a.js'

export function basicHeader(user: string, apiPassword: string): Record<string, string> {
  return { authorization: 'Basic ' + Buffer.from(`${user}:${apiPassword}`).toString('base64') }
}

/** X-WSSE with a fresh base64 nonce, Created at `now`. */
export function wsseHeader(user: string, apiPassword: string, now: number, password = apiPassword): Record<string, string> {
  const nonce = randomBytes(16)
  const created = new Date(now).toISOString().replace(/\.[0-9]{3}Z$/, 'Z')
  const digest = createHash('sha1').update(Buffer.concat([nonce, Buffer.from(created + password)])).digest('base64')
  return { 'x-wsse': `UsernameToken Username="${user}", PasswordDigest="${digest}", Nonce="${nonce.toString('base64')}", Created="${created}"` }
}

export interface OAuthClient {
  consumerKey: string
  consumerSecret: string
  token: string
  tokenSecret: string
}

/** Authorization: OAuth … for a request at `now`. */
export function oauthHeader(client: OAuthClient, request: { url: string; method: string; data?: Record<string, string> }, now: number): Record<string, string> {
  const oauth = oauth1aClient({ key: client.consumerKey, secret: client.consumerSecret })
  oauth.getTimeStamp = () => Math.floor(now / 1000)
  return { authorization: oauth.toHeader(oauth.authorize(request, { key: client.token, secret: client.tokenSecret })).Authorization }
}

export const form = { 'content-type': 'application/x-www-form-urlencoded' }
