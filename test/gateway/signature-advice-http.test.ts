// Signature problems explain themselves (OAuth Problem Reporting's oauth_problem_advice):
// requests signed by the independent `oauth-sign` library with the mistakes client
// developers make, sent to a running gateway; each answer names its mistake and what the
// server signed. The whole base string comes in a header only where it is enabled.
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { oauthChallenge, oauthFetch, oauthHeader, WebClient, csrfOf, hiddenField, type OAuthCall } from './provider/helpers.js'

const rfc3986 = (createRequire(import.meta.url)('oauth-sign') as { rfc3986: (s: string) => string }).rfc3986

interface Answer { status: number; headers: Headers; body: { error: { code: string; message: string } } }

async function send(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init)
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] }
}

function adviceOf(a: Answer): string {
  return decodeURIComponent(oauthChallenge(a.headers).oauth_problem_advice ?? '')
}

describe('signature_invalid explains itself', () => {
  let stack: Stack
  let client: { consumer: { key: string; secret: string }; token: { token: string; secret: string } }
  let port: string

  beforeAll(async () => {
    stack = await startStack({ overrides: { auth: { signatureBaseStringHeader: true } } })
    await stack.addUser('alice')
    const c = await stack.addOAuthClient('alice', ['read_public', 'write_public'])
    client = { consumer: { key: c.consumerKey, secret: c.consumerSecret }, token: { token: c.token, secret: c.tokenSecret } }
    port = new URL(stack.url).port
  })
  afterAll(() => stack.close())

  /** Signs `signed` (URL and form), sends to `sentUrl` with `init`. */
  const signedAs = (signed: Partial<OAuthCall> & { url: string }, sentUrl: string, init: RequestInit = {}) =>
    send(sentUrl, {
      method: signed.method ?? 'POST',
      ...init,
      headers: { authorization: oauthHeader({ ...client, method: 'POST', ...signed }), ...(init.headers as Record<string, string> | undefined) },
    })

  const formInit = (form: Record<string, string>): RequestInit => ({
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  })

  it('names what the server signed: method, base string URI, parameter names in order; the base string in a header', async () => {
    const url = `${stack.url}/api/statuses/update.json`
    const a = await signedAs({ url, form: { status: 'hello' }, signWithSecret: 'not-the-secret' }, url, formInit({ status: 'hello' }))
    expect(a.status).toBe(401)
    expect(a.body.error.code).toBe('signature_invalid')
    const advice = adviceOf(a)
    expect(advice).toContain(`The server signed POST http://localhost:${port}/api/statuses/update.json with the parameters oauth_consumer_key, oauth_nonce, oauth_signature_method, oauth_timestamp, oauth_token, oauth_version, status (in this order)`)
    expect(a.body.error.message).toContain(advice)
    const base = a.headers.get('x-oauth-signature-base-string')!
    expect(base).toMatch(new RegExp(`^POST&http%3A%2F%2Flocalhost%3A${port}%2Fapi%2Fstatuses%2Fupdate.json&oauth_consumer_key%3D`))
    expect(base).toContain('%26status%3Dhello')
    // Never a secret.
    for (const secret of [client.consumer.secret, client.token.secret]) {
      expect(base).not.toContain(secret)
      expect(JSON.stringify(a.body)).not.toContain(secret)
      expect(a.headers.get('www-authenticate')).not.toContain(secret)
    }
  })

  it('wrong host: signed for the global host, sent to the domestic one', async () => {
    const a = await signedAs({ url: `${stack.globalUrl}/api/statuses/update.json`, form: { status: 'x' } }, `${stack.url}/api/statuses/update.json`, formInit({ status: 'x' }))
    expect(a.status).toBe(401)
    expect(adviceOf(a)).toContain(`You signed the host 127.0.0.1:${port} but sent the request to localhost:${port}`)
  })

  it('wrong port: signed without the port the request was sent to', async () => {
    const a = await signedAs({ url: 'http://localhost/api/statuses/update.json', form: { status: 'x' } }, `${stack.url}/api/statuses/update.json`, formInit({ status: 'x' }))
    expect(adviceOf(a)).toContain(`You signed the host as localhost but sent the request to localhost:${port}`)
  })

  it('http vs https: signed https, sent over http', async () => {
    const a = await signedAs({ url: `https://localhost:${port}/api/statuses/update.json`, form: { status: 'x' } }, `${stack.url}/api/statuses/update.json`, formInit({ status: 'x' }))
    expect(adviceOf(a)).toContain('You signed https:// but the request arrived as http://')
  })

  it('query parameters left out of the signature', async () => {
    const a = await signedAs({ method: 'GET', url: `${stack.url}/api/statuses/show/1.json` }, `${stack.url}/api/statuses/show/1.json?source=myclient&x=1`, { method: 'GET' })
    expect(a.status).toBe(401)
    expect(adviceOf(a)).toContain('You left the query parameters (source, x) out of the signature')
  })

  it('the fields of a JSON body signed', async () => {
    const a = await signedAs({ url: `${stack.url}/api/statuses/update.json`, form: { status: 'from json' } }, `${stack.url}/api/statuses/update.json`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'from json' }),
    })
    expect(a.status).toBe(401)
    expect(adviceOf(a)).toContain('You signed the fields of the JSON body (status): only an application/x-www-form-urlencoded body is signed')
  })

  it('the text fields of a multipart body signed', async () => {
    const body = new FormData()
    body.set('keyword', 'photos')
    body.set('file', new Blob([Buffer.from('89504e470d0a1a0a', 'hex')], { type: 'image/png' }), 'dot.png')
    const a = await signedAs({ url: `${stack.url}/api/statuses/update.json`, form: { keyword: 'photos' } }, `${stack.url}/api/statuses/update.json`, { body })
    expect(a.status).toBe(401)
    expect(adviceOf(a)).toContain('You signed the fields of the multipart body (keyword)')
  })

  it('a multipart body signed correctly (its fields left out) is accepted', async () => {
    const body = new FormData()
    body.set('keyword', 'photos')
    body.set('file', new Blob([Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8ffff3f0005fe02fea73581840000000049454e44ae426082', 'hex')], { type: 'image/png' }), 'dot.png')
    const c = await stack.addOAuthClient('alice', ['write_public', 'write_private'])
    const res = await fetch(`${stack.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { authorization: oauthHeader({ consumer: { key: c.consumerKey, secret: c.consumerSecret }, token: { token: c.token, secret: c.tokenSecret }, url: `${stack.url}/api/statuses/update.json` }) },
      body,
    })
    expect(res.status).toBe(200)
  })

  it('double encoding of parameter values', async () => {
    const status = 'a b&c=d'
    const a = await signedAs({ url: `${stack.url}/api/statuses/update.json`, form: { status: rfc3986(status) } }, `${stack.url}/api/statuses/update.json`, formInit({ status }))
    expect(adviceOf(a)).toContain('You percent-encoded the parameter values twice')
  })

  it('signed with the consumer secret alone', async () => {
    const url = `${stack.url}/api/statuses/update.json`
    const a = await signedAs({ url, form: { status: 'x' }, token: { token: client.token.token, secret: '' } }, url, formInit({ status: 'x' }))
    expect(adviceOf(a)).toContain('You signed with the consumer secret alone')
  })

  it('a clock off by more than the window: the server states its time', async () => {
    const url = `${stack.url}/api/statuses/update.json`
    const before = Math.floor(Date.now() / 1000)
    const a = await signedAs({ url, form: { status: 'x' }, timestamp: before - 3600 }, url, formInit({ status: 'x' }))
    expect(a.status).toBe(401)
    expect(a.body.error.code).toBe('timestamp_refused')
    const advice = adviceOf(a)
    const m = /The server's time is (\S+) \((\d+) seconds since the epoch\); your oauth_timestamp is (\d+) seconds behind/.exec(advice)
    expect(m).not.toBeNull()
    expect(Math.abs(Number(m![2]) - before)).toBeLessThan(5)
    expect(Date.parse(m![1]!)).toBe(Number(m![2]) * 1000)
    expect(Math.abs(Number(m![3]) - 3600)).toBeLessThan(5)
  })

  it('the OAuth 1.0 flow (no oauth_verifier at the token exchange, no oauth_callback at initiate)', async () => {
    const initiate = await oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer: client.consumer })
    expect(initiate.status).toBe(400)
    expect(decodeURIComponent(oauthChallenge(initiate.headers).oauth_problem_advice ?? '')).toContain('This looks like the OAuth 1.0 flow: kigo speaks OAuth 1.0a (RFC 5849 §2.1), where oauth/initiate carries oauth_callback')

    const rt = await oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer: client.consumer, oauth: { oauth_callback: 'oob' } })
    expect(rt.status).toBe(200)
    const exchange = await oauthFetch({ url: `${stack.url}/oauth/token`, consumer: client.consumer, token: { token: rt.form.get('oauth_token')!, secret: rt.form.get('oauth_token_secret')! } })
    expect(exchange.status).toBe(400)
    expect(exchange.json().error.code).toBe('parameter_absent')
    expect(decodeURIComponent(oauthChallenge(exchange.headers).oauth_problem_advice ?? '')).toContain('the token exchange carries the oauth_verifier the user was shown (oob)')
  })

  it('the token endpoint explains a signature made for the wrong host', async () => {
    const rt = await oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer: client.consumer, oauth: { oauth_callback: 'oob' } })
    const web = new WebClient(stack.url)
    const user = await stack.admin<{ password: string }>('POST', '/admin/users', { id: 'tokenhost' })
    await web.signIn(`/oauth/authorize?oauth_token=${rt.form.get('oauth_token')}`, 'tokenhost', user.body.password)
    const consent = await web.get(`/oauth/authorize?oauth_token=${rt.form.get('oauth_token')}`)
    const allowed = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: hiddenField(consent.text, 'oauth_token')!, decision: 'allow' })
    const verifier = /id="oauth_verifier"[^>]*>([^<]+)</.exec(allowed.text)![1]!
    const a = await send(`${stack.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: oauthHeader({ url: `${stack.globalUrl}/oauth/token`, consumer: client.consumer, token: { token: rt.form.get('oauth_token')!, secret: rt.form.get('oauth_token_secret')! }, oauth: { oauth_verifier: verifier } }) },
    })
    expect(a.status).toBe(401)
    expect(adviceOf(a)).toContain(`You signed the host 127.0.0.1:${port}`)
  })
})

describe('the base string header in production mode', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack()
  })
  afterAll(() => stack.close())

  it('is not sent unless configured; the advice still is', async () => {
    await stack.addUser('bob')
    const c = await stack.addOAuthClient('bob', ['write_public'])
    const url = `${stack.url}/api/statuses/update.json`
    const a = await oauthFetch({ url, consumer: { key: c.consumerKey, secret: c.consumerSecret }, token: { token: c.token, secret: c.tokenSecret }, form: { status: 'x' }, signWithSecret: 'wrong' })
    expect(a.status).toBe(401)
    expect(a.headers.get('x-oauth-signature-base-string')).toBeNull()
    expect(decodeURIComponent(oauthChallenge(a.headers).oauth_problem_advice ?? '')).toContain('The server signed POST')
  })
})
