// Bad credentials of every kind, through a running gateway: each gets its documented 4xx
// in the request's format, never a 5xx, and changes no data (docs/gateway.md#wsse-usernametoken, docs/gateway.md#oauth-10a, docs/operations.md#dependability).
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { authorizationHeader, hmacSha1Signature, protocolParams } from '../helpers/oauth-header.js'
import { startStack, type Stack } from '../helpers/stack.js'

let stack: Stack
let apiPassword: string
let client: { consumerKey: string; consumerSecret: string; token: string; tokenSecret: string }

beforeAll(async () => {
  stack = await startStack()
  apiPassword = (await stack.addUser('frank', 'Frank')).api_password
  client = await stack.addOAuthClient('frank', ['write_public'])
})

afterAll(async () => {
  await stack?.close()
})

/** An OAuth header for POST statuses/update with `form`, with parts overridable. */
function oauthHeader(form: Record<string, string>, over: Record<string, string> = {}, sign: { method?: string; host?: string } = {}): string {
  const params = protocolParams(client, over)
  const signed = [...Object.entries(params), ...Object.entries(form)].filter(([k]) => k !== 'oauth_signature')
  const host = sign.host ?? new URL(stack.url).host
  const signature = over.oauth_signature ?? hmacSha1Signature(client, sign.method ?? 'POST', `http://${host}/api/statuses/update.json`, signed)
  return authorizationHeader(params, signature)
}

function wsseHeader(over: { nonce?: string; created?: string; digest?: string; user?: string } = {}): string {
  const nonce = over.nonce ?? randomBytes(16).toString('base64')
  const created = over.created ?? new Date().toISOString()
  const digest = over.digest ?? createHash('sha1').update(Buffer.concat([Buffer.from(nonce, 'base64'), Buffer.from(created + apiPassword)])).digest('base64')
  return `UsernameToken Username="${over.user ?? 'frank'}", PasswordDigest="${digest}", Nonce="${nonce}", Created="${created}"`
}

async function post(headers: Record<string, string>, body = 'status=should+not+be+stored', path = '/api/statuses/update.json') {
  const res = await request(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, text }
}

const form = { status: 'should not be stored' }
const body = 'status=should+not+be+stored'
const old = String(Math.floor(Date.now() / 1000) - 3600)
const future = String(Math.floor(Date.now() / 1000) + 3600)

const cases: Array<[string, () => Record<string, string>, number, string?]> = [
  ['garbage Basic', () => ({ authorization: 'Basic !!!not-base64' }), 401],
  ['Basic without a colon', () => ({ authorization: 'Basic ' + Buffer.from('frank').toString('base64') }), 401],
  ['Basic for an unknown user', () => ({ authorization: 'Basic ' + Buffer.from('nobody:x').toString('base64') }), 401],
  ['Basic with an empty value', () => ({ authorization: 'Basic' }), 401],
  ['WSSE missing fields', () => ({ 'x-wsse': 'UsernameToken Username="frank"' }), 400],
  ['WSSE not a UsernameToken', () => ({ 'x-wsse': 'garbage' }), 400],
  ['WSSE with a stale Created', () => ({ 'x-wsse': wsseHeader({ created: '2003-12-15T14:43:07Z' }) }), 401],
  ['WSSE with an unparseable Created', () => ({ 'x-wsse': wsseHeader({ created: 'yesterday' }) }), 400],
  ['WSSE with a wrong digest', () => ({ 'x-wsse': wsseHeader({ digest: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' }) }), 401],
  ['WSSE for an unknown user', () => ({ 'x-wsse': wsseHeader({ user: 'nobody' }) }), 401],
  ['OAuth header with an unterminated quote', () => ({ authorization: 'OAuth oauth_consumer_key="abc' }), 400],
  ['OAuth without a signature', () => ({ authorization: 'OAuth oauth_consumer_key="abc"' }), 400, 'parameter_absent'],
  ['OAuth with an unsupported signature method', () => ({ authorization: oauthHeader(form, { oauth_signature_method: 'RSA-SHA1' }) }), 400, 'signature_method_rejected'],
  ['OAuth PLAINTEXT over http', () => ({ authorization: oauthHeader(form, { oauth_signature_method: 'PLAINTEXT' }) }), 400, 'signature_method_rejected'],
  ['OAuth version 2.0', () => ({ authorization: oauthHeader(form, { oauth_version: '2.0' }) }), 400, 'version_rejected'],
  ['OAuth stale timestamp', () => ({ authorization: oauthHeader(form, { oauth_timestamp: old }) }), 401, 'timestamp_refused'],
  ['OAuth future timestamp', () => ({ authorization: oauthHeader(form, { oauth_timestamp: future }) }), 401, 'timestamp_refused'],
  ['OAuth unknown consumer', () => ({ authorization: oauthHeader(form, { oauth_consumer_key: 'unknownconsumerkey123' }) }), 401, 'consumer_key_unknown'],
  ['OAuth unknown token', () => ({ authorization: oauthHeader(form, { oauth_token: 'unknowntokenvalue12345678' }) }), 401, 'token_rejected'],
  ['OAuth signed for another method', () => ({ authorization: oauthHeader(form, {}, { method: 'GET' }) }), 401, 'signature_invalid'],
  ['OAuth signed for another host', () => ({ authorization: oauthHeader(form, {}, { host: 'evil.example' }) }), 401, 'signature_invalid'],
  ['OAuth signed over another body', () => ({ authorization: oauthHeader({ status: 'something else' }) }), 401, 'signature_invalid'],
  ['OAuth with a repeated protocol parameter', () => ({ authorization: oauthHeader(form) + ', oauth_nonce="again"' }), 400, 'parameter_rejected'],
]

describe('rejected credentials', () => {
  for (const [name, headers, status, code] of cases) {
    it(`${name}: ${status}${code ? ` ${code}` : ''}, in format, nothing stored`, async () => {
      const res = await post(headers(), body)
      expect(res.status).toBe(status)
      const parsed = JSON.parse(res.text)
      expect(parsed.error.status).toBe(status)
      if (code) {
        expect(parsed.error.code).toBe(code)
        expect(String(res.headers['www-authenticate'])).toContain(`oauth_problem="${code}"`)
      }
    })
  }

  it('answers in XML for an .xml path', async () => {
    const res = await post({ authorization: 'Basic !!!' }, body, '/api/statuses/update.xml')
    expect(res.status).toBe(401)
    expect(res.headers['content-type']).toMatch(/^application\/xml/)
    expect(res.text).toContain('<error><status>401</status>')
  })

  it('OAuth parameters in both the header and the query: 400', async () => {
    const res = await post({ authorization: oauthHeader(form) }, body, `/api/statuses/update.json?oauth_consumer_key=${client.consumerKey}&oauth_signature=x`)
    expect(res.status).toBe(400)
  })

  it('stored nothing for any of them', async () => {
    // The next entry's id is the count of entries stored so far plus one: none above.
    const ok = await post({ authorization: 'Basic ' + Buffer.from(`frank:${apiPassword}`).toString('base64') }, 'status=the+only+one')
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.text).id).toBe('1')
  })
})
