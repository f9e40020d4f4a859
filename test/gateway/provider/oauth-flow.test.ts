// The OAuth 1.0a provider over HTTP (RFC 5849 §2, docs/gateway.md#the-oauth-provider-and-the-account-pages): initiate, authorize, token,
// and every rule and error of each, against a running kigo whose clock the test moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { WebClient, csrfOf, oauthChallenge, oauthFetch, type OAuthCall } from './helpers.js'
import { parseSetCookie } from '../../helpers/set-cookie.js'

let stack: Stack
/** The gateway's clock runs this far ahead of the real one. */
let offsetMs = 0
const nowMs = () => Date.now() + offsetMs
const nowSeconds = () => Math.floor(nowMs() / 1000)

type Client = { key: string; secret: string }
let alice: { id: string; password: string; api_password: string }
let open: Client // no registered callback; read_public + write_public
let fixed: Client // registered callback https://client.example/cb; read_public

async function addApp(name: string, scopes: string[], callback?: string): Promise<Client> {
  const r = await stack.admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name, owner: 'owner', scopes, ...(callback ? { callback } : {}) })
  if (r.status !== 201) throw new Error(JSON.stringify(r.body))
  return { key: r.body.consumer_key, secret: r.body.consumer_secret }
}

beforeAll(async () => {
  stack = await startStack({ now: nowMs })
  await stack.addUser('owner', 'App Owner')
  alice = await stack.addUser('alice', 'Alice Liddell')
  open = await addApp('Open <Client> & Co', ['read_public', 'write_public'])
  fixed = await addApp('Fixed Client', ['read_public'], 'https://client.example/cb')
})

afterAll(async () => {
  await stack?.close()
})

const initiateUrl = () => `${stack.url}/oauth/initiate`
const tokenUrl = () => `${stack.url}/oauth/token`

function initiate(consumer: Client, o: Partial<OAuthCall> & { callback?: string | null; scope?: string } = {}) {
  const { callback = 'oob', scope, ...rest } = o
  return oauthFetch({
    url: initiateUrl(),
    consumer,
    timestamp: nowSeconds(),
    ...(callback === null ? {} : { oauth: { oauth_callback: callback, ...rest.oauth } }),
    ...(scope === undefined ? {} : { form: { scope } }),
    ...rest,
  })
}

async function requestToken(consumer: Client, callback = 'oob', scope?: string) {
  const res = await initiate(consumer, { callback, ...(scope ? { scope } : {}) })
  expect(res.status, res.text).toBe(200)
  return { token: res.form.get('oauth_token')!, secret: res.form.get('oauth_token_secret')! }
}

function exchange(consumer: Client, rt: { token: string; secret: string }, verifier: string, o: Partial<OAuthCall> = {}) {
  return oauthFetch({ url: tokenUrl(), consumer, token: rt, oauth: { oauth_verifier: verifier }, timestamp: nowSeconds(), ...o })
}

/** Signs alice in and answers the consent page; returns the answer to the decision post. */
async function decide(rt: { token: string }, decision: 'allow' | 'deny', web = new WebClient(stack.url)) {
  const path = `/oauth/authorize?oauth_token=${encodeURIComponent(rt.token)}`
  const signedIn = await web.signIn(path, 'alice', alice.password)
  expect(signedIn.status).toBe(303)
  const consent = await web.get(signedIn.headers.get('location')!)
  expect(consent.status, consent.text).toBe(200)
  return web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: rt.token, decision })
}

function verifierFrom(page: string): string {
  const m = /<code class="verifier" id="oauth_verifier"[^>]*>([^<]+)<\/code>/.exec(page)
  if (!m) throw new Error('no verifier on the page')
  return m[1]!
}

describe('POST /oauth/initiate', () => {
  it('issues a request token as a form-encoded answer that is never cached', async () => {
    const res = await initiate(open, { callback: 'http://127.0.0.1:9/cb?state=x' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/x-www-form-urlencoded/)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.form.get('oauth_token')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(res.form.get('oauth_token_secret')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(res.form.get('oauth_callback_confirmed')).toBe('true')
  })

  it('requires oauth_callback (parameter_absent, reported like the resource verifier)', async () => {
    const res = await initiate(open, { callback: null })
    expect(res.status).toBe(400)
    expect(res.json().error.code).toBe('parameter_absent')
    expect(oauthChallenge(res.headers)).toMatchObject({ realm: 'kigo', oauth_problem: 'parameter_absent', oauth_parameters_absent: 'oauth_callback' })
  })

  it('accepts only "oob" or an absolute http/https URL as the callback', async () => {
    for (const callback of ['javascript:alert(1)', '/relative', 'ftp://client.example/cb', 'http://user:pw@client.example/', 'https://client.example/#frag', 'OOB']) {
      const res = await initiate(open, { callback })
      expect(res.status, callback).toBe(400)
      expect(oauthChallenge(res.headers)).toMatchObject({ oauth_problem: 'parameter_rejected', oauth_parameters_rejected: 'oauth_callback' })
    }
  })

  it('holds a client with a registered callback to its scheme, host and port', async () => {
    expect((await initiate(fixed, { callback: 'https://client.example/other/path?x=1' })).status).toBe(200)
    expect((await initiate(fixed, { callback: 'https://CLIENT.example:443/cb' })).status).toBe(200)
    expect((await initiate(fixed, { callback: 'oob' })).status).toBe(200)
    for (const callback of ['http://client.example/cb', 'https://client.example:8443/cb', 'https://evil.example/cb', 'https://client.example.evil.example/cb']) {
      const res = await initiate(fixed, { callback })
      expect(res.status, callback).toBe(400)
      expect(res.json().error.code).toBe('parameter_rejected')
    }
  })

  it('refuses a scope the application did not register, and unknown or repeated scopes', async () => {
    const beyond = await initiate(fixed, { scope: 'read_public,write_public' })
    expect(beyond.status).toBe(400)
    expect(beyond.json().error).toMatchObject({ status: 400, code: 'parameter_rejected' })
    expect(beyond.json().error.message).toContain('write_public')
    expect(oauthChallenge(beyond.headers)).toMatchObject({ oauth_problem: 'parameter_rejected', oauth_parameters_rejected: 'scope' })

    expect((await initiate(open, { scope: 'read_everything' })).status).toBe(400)
    expect((await initiate(open, { scope: ' , ' })).status).toBe(400)
    const repeated = await oauthFetch({ url: initiateUrl(), consumer: open, oauth: { oauth_callback: 'oob' }, form: { scope: ['read_public', 'write_public'] }, timestamp: nowSeconds() })
    expect(repeated.status).toBe(400)
    expect((await initiate(open, { scope: ' write_public , read_public ' })).status).toBe(200)
  })

  it('takes the scope from the query string too (it is signed there as well)', async () => {
    const res = await oauthFetch({ url: `${initiateUrl()}?scope=read_public`, consumer: open, oauth: { oauth_callback: 'oob' }, timestamp: nowSeconds() })
    expect(res.status).toBe(200)
  })

  it('is signed with the consumer credentials only', async () => {
    const res = await oauthFetch({ url: initiateUrl(), consumer: open, token: { token: 'x'.repeat(24), secret: '' }, oauth: { oauth_callback: 'oob' }, timestamp: nowSeconds() })
    expect(res.status).toBe(400)
    expect(oauthChallenge(res.headers)).toMatchObject({ oauth_problem: 'parameter_rejected', oauth_parameters_rejected: 'oauth_token' })
    // An empty oauth_token, as some clients send, is no token.
    const empty = await oauthFetch({ url: initiateUrl(), consumer: open, oauth: { oauth_callback: 'oob', oauth_token: '' }, timestamp: nowSeconds() })
    expect(empty.status, empty.text).toBe(200)
  })

  it('refuses a bad signature, an unknown consumer, a stale timestamp and a replayed nonce with 401', async () => {
    const forged = await initiate(open, { signWithSecret: 'not-the-secret' })
    expect(forged.status).toBe(401)
    expect(forged.json().error.code).toBe('signature_invalid')
    expect(oauthChallenge(forged.headers)).toMatchObject({ realm: 'kigo', oauth_problem: 'signature_invalid' })

    const unknown = await initiate({ key: 'unknown-consumer-key-123', secret: 's' })
    expect(unknown.status).toBe(401)
    expect(oauthChallenge(unknown.headers).oauth_problem).toBe('consumer_key_unknown')

    const stale = await initiate(open, { timestamp: nowSeconds() - 3600 })
    expect(stale.status).toBe(401)
    expect(oauthChallenge(stale.headers)).toMatchObject({ oauth_problem: 'timestamp_refused' })
    expect(oauthChallenge(stale.headers).oauth_acceptable_timestamps).toMatch(/^\d+-\d+$/)

    const nonce = `n-${Date.now()}`
    const timestamp = nowSeconds()
    expect((await initiate(open, { nonce, timestamp })).status).toBe(200)
    const replay = await initiate(open, { nonce, timestamp })
    expect(replay.status).toBe(401)
    expect(oauthChallenge(replay.headers).oauth_problem).toBe('nonce_used')
  })

  it('refuses unsupported signature methods and versions with 400', async () => {
    const res = await initiate(open, { oauth: { oauth_callback: 'oob', oauth_signature_method: 'RSA-SHA1' } })
    expect(res.status).toBe(400)
    expect(oauthChallenge(res.headers).oauth_problem).toBe('signature_method_rejected')
    const version = await initiate(open, { oauth: { oauth_callback: 'oob', oauth_version: '2.0' } })
    expect(version.status).toBe(400)
    expect(oauthChallenge(version.headers).oauth_problem).toBe('version_rejected')
  })

  it('answers other methods with 405 and Allow: POST', async () => {
    for (const path of ['/oauth/initiate', '/oauth/token']) {
      const res = await fetch(stack.url + path)
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
      expect((await res.json()).error.code).toBe('method_not_allowed')
    }
  })
})

describe('GET and POST /oauth/authorize', () => {
  it('shows a login form to a visitor, with a session cookie and the page security headers', async () => {
    const rt = await requestToken(open)
    const web = new WebClient(stack.url)
    const res = await web.get(`/oauth/authorize?oauth_token=${rt.token}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.text).toMatch(/<input type="text" id="username" name="username"/)
    expect(res.text).toMatch(/<input type="password" id="password" name="password"/)
    expect(res.text).toContain('Open &lt;Client&gt; &amp; Co')
    expect(res.text).not.toContain('Open <Client>')
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none';style-src 'unsafe-inline';form-action 'self'")
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('referrer-policy')).toBe('no-referrer')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const cookie = res.headers.getSetCookie()[0]!
    // Exactly these attributes: no Secure over plain http.
    expect(parseSetCookie(cookie)).toEqual({ name: 'kigo_session', value: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/), attributes: { path: '/', 'max-age': expect.stringMatching(/^\d+$/), httponly: true, samesite: 'Lax' } })
  })

  it('names the application and each scope in plain words, with Allow and Deny', async () => {
    const rt = await requestToken(open, 'http://127.0.0.1:9/cb', 'read_public,write_public')
    const web = new WebClient(stack.url)
    const signedIn = await web.signIn(`/oauth/authorize?oauth_token=${rt.token}`, 'alice', alice.password)
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toBe(`/oauth/authorize?oauth_token=${rt.token}`)
    const consent = await web.get(signedIn.headers.get('location')!)
    expect(consent.status).toBe(200)
    expect(consent.text).toContain('Allow <strong>Open &lt;Client&gt; &amp; Co</strong>')
    expect(consent.text).toContain('See your public entries and stars')
    expect(consent.text).toContain('Post and delete entries and add or remove stars for you')
    expect(consent.text).not.toContain('Upload photos')
    expect(consent.text).toMatch(/<button type="submit" name="decision" value="allow">Allow<\/button>/)
    expect(consent.text).toMatch(/<button type="submit" name="decision" value="deny" class="secondary">Deny<\/button>/)
    // Browsers apply form-action to the redirect that answers the post: the callback's origin is allowed.
    expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9;")
  })

  it('Allow redirects to the callback with the token and a verifier, keeping its query', async () => {
    const rt = await requestToken(open, 'http://127.0.0.1:9/cb?state=abc')
    const res = await decide(rt, 'allow')
    expect(res.status).toBe(303)
    const location = new URL(res.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:9/cb')
    expect(location.searchParams.get('state')).toBe('abc')
    expect(location.searchParams.get('oauth_token')).toBe(rt.token)
    expect(location.searchParams.get('oauth_verifier')).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/)
  })

  it('Allow with oob shows the verifier on a page', async () => {
    const rt = await requestToken(open)
    const res = await decide(rt, 'allow')
    expect(res.status).toBe(200)
    expect(verifierFrom(res.text)).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{8}$/)
  })

  it('Deny redirects with denied=<token>, or says so for oob, and the token is refused afterwards', async () => {
    const rt = await requestToken(open, 'https://client.example/cb')
    const res = await decide(rt, 'deny')
    expect(res.status).toBe(303)
    const location = new URL(res.headers.get('location')!)
    expect(location.searchParams.get('denied')).toBe(rt.token)
    expect(location.searchParams.has('oauth_verifier')).toBe(false)
    const refused = await exchange(open, rt, 'anything')
    expect(refused.status).toBe(401)
    expect(oauthChallenge(refused.headers).oauth_problem).toBe('permission_denied')

    const oob = await requestToken(open)
    const page = await decide(oob, 'deny')
    expect(page.status).toBe(200)
    expect(page.text).toContain('You denied Open &lt;Client&gt; &amp; Co')
  })

  it('refuses a decision posted without the CSRF token, or with a wrong one (403), and records nothing', async () => {
    const rt = await requestToken(open)
    const web = new WebClient(stack.url)
    await web.signIn(`/oauth/authorize?oauth_token=${rt.token}`, 'alice', alice.password)
    const without = await web.post('/oauth/authorize', { oauth_token: rt.token, decision: 'allow' })
    expect(without.status).toBe(403)
    expect(without.text).not.toContain('oauth_verifier')
    const wrong = await web.post('/oauth/authorize', { csrf_token: 'forged-token-value', oauth_token: rt.token, decision: 'allow' })
    expect(wrong.status).toBe(403)
    // A session from another browser does not carry this one's token either.
    const other = new WebClient(stack.url)
    const page = await other.get(`/oauth/authorize?oauth_token=${rt.token}`)
    const crossed = await web.post('/oauth/authorize', { csrf_token: csrfOf(page.text), oauth_token: rt.token, decision: 'allow' })
    expect(crossed.status).toBe(403)
    // The request token is still pending: a real decision works.
    const consent = await web.get(`/oauth/authorize?oauth_token=${rt.token}`)
    expect(consent.status).toBe(200)
    expect(consent.text).toContain('Allow')
  })

  it('answers an unknown, missing, expired or already answered request token with a 400 page', async () => {
    const web = new WebClient(stack.url)
    const unknown = await web.get('/oauth/authorize?oauth_token=unknown-token-value-123456')
    expect(unknown.status).toBe(400)
    expect(unknown.text).toContain('not known')
    expect((await web.get('/oauth/authorize')).status).toBe(400)

    const rt = await requestToken(open)
    await decide(rt, 'allow')
    const answered = await web.get(`/oauth/authorize?oauth_token=${rt.token}`)
    expect(answered.status).toBe(400)
    expect(answered.text).toContain('already answered')
  })

  it('refuses a decision that is neither allow nor deny', async () => {
    const rt = await requestToken(open)
    const web = new WebClient(stack.url)
    const signedIn = await web.signIn(`/oauth/authorize?oauth_token=${rt.token}`, 'alice', alice.password)
    const consent = await web.get(signedIn.headers.get('location')!)
    const res = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: rt.token, decision: 'maybe' })
    expect(res.status).toBe(400)
  })
})

describe('POST /oauth/token', () => {
  it('exchanges the approved request token for an access token carrying the approved scopes', async () => {
    const rt = await requestToken(open, 'oob', 'write_public')
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    const res = await exchange(open, rt, verifier)
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/x-www-form-urlencoded/)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const access = { token: res.form.get('oauth_token')!, secret: res.form.get('oauth_token_secret')! }
    expect(access.token).not.toBe(rt.token)

    const tokens = await stack.admin<{ tokens: Array<{ token: string; scopes: string[] }> }>('GET', '/admin/tokens?user=alice')
    expect(tokens.body.tokens.find((t) => t.token === access.token)?.scopes).toEqual(['write_public'])

    // The access token posts an entry through the gateway.
    const post = await oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: open, token: access, form: { status: 'kigo=hello via the provider' }, timestamp: nowSeconds() })
    expect(post.status, post.text).toBe(200)
    expect(post.json().user.id).toBe('alice')
  })

  it('gives the application its registered scopes when the client asked for none', async () => {
    const rt = await requestToken(open)
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    const res = await exchange(open, rt, verifier)
    const access = { token: res.form.get('oauth_token')!, secret: res.form.get('oauth_token_secret')! }
    const post = await oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: open, token: access, form: { status: 'kigo=all scopes' }, timestamp: nowSeconds() })
    expect(post.status).toBe(200)
  })

  it('a token carrying only read_public cannot post (403 additional_authorization_required)', async () => {
    const rt = await requestToken(open, 'oob', 'read_public')
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    const res = await exchange(open, rt, verifier)
    const access = { token: res.form.get('oauth_token')!, secret: res.form.get('oauth_token_secret')! }
    const post = await oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: open, token: access, form: { status: 'kigo=nope' }, timestamp: nowSeconds() })
    expect(post.status).toBe(403)
    expect(post.json().error.code).toBe('additional_authorization_required')
  })

  it('a verifier and its request token are good once', async () => {
    const rt = await requestToken(open)
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    expect((await exchange(open, rt, verifier)).status).toBe(200)
    const again = await exchange(open, rt, verifier)
    expect(again.status).toBe(401)
    expect(again.json().error.code).toBe('token_rejected')
    expect(oauthChallenge(again.headers).oauth_problem).toBe('token_rejected')
  })

  it('refuses a wrong verifier without spending the request token', async () => {
    const rt = await requestToken(open)
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    const wrong = await exchange(open, rt, verifier + 'x')
    expect(wrong.status).toBe(401)
    expect(oauthChallenge(wrong.headers)).toMatchObject({ oauth_problem: 'parameter_rejected', oauth_parameters_rejected: 'oauth_verifier' })
    expect((await exchange(open, rt, verifier)).status).toBe(200)
  })

  it('refuses a request token the user has not decided on yet', async () => {
    const rt = await requestToken(open)
    const res = await exchange(open, rt, 'no-decision-yet')
    expect(res.status).toBe(401)
    expect(oauthChallenge(res.headers).oauth_problem).toBe('permission_unknown')
  })

  it('requires the verifier and the token (parameter_absent)', async () => {
    const rt = await requestToken(open)
    const res = await oauthFetch({ url: tokenUrl(), consumer: open, token: rt, timestamp: nowSeconds() })
    expect(res.status).toBe(400)
    expect(oauthChallenge(res.headers)).toMatchObject({ oauth_problem: 'parameter_absent', oauth_parameters_absent: 'oauth_verifier' })
  })

  it('refuses a request token of another application, a wrong token secret, an unknown token', async () => {
    const rt = await requestToken(open)
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    const otherApp = await exchange(fixed, rt, verifier)
    expect(otherApp.status).toBe(401)
    expect(oauthChallenge(otherApp.headers).oauth_problem).toBe('token_rejected')

    const badSecret = await exchange(open, { token: rt.token, secret: 'wrong-secret' }, verifier)
    expect(badSecret.status).toBe(401)
    expect(oauthChallenge(badSecret.headers).oauth_problem).toBe('signature_invalid')

    const unknown = await exchange(open, { token: 'unknown-request-token-000', secret: 'x' }, verifier)
    expect(unknown.status).toBe(401)
    expect(oauthChallenge(unknown.headers).oauth_problem).toBe('token_rejected')

    // None of those spent it.
    expect((await exchange(open, rt, verifier)).status).toBe(200)
  })
})

describe('request token expiry (10 minutes)', () => {
  it('an expired request token cannot be authorized or exchanged (token_expired)', async () => {
    const rt = await requestToken(open)
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    const waiting = await requestToken(open)
    try {
      offsetMs = 10 * 60_000 + 1000
      const res = await exchange(open, rt, verifier)
      expect(res.status).toBe(401)
      expect(res.json().error.code).toBe('token_expired')
      expect(oauthChallenge(res.headers).oauth_problem).toBe('token_expired')

      const page = await new WebClient(stack.url).get(`/oauth/authorize?oauth_token=${waiting.token}`)
      expect(page.status).toBe(400)
      expect(page.text).toContain('expired')
    } finally {
      offsetMs = 0
    }
  })

  it('is still good nine minutes on', async () => {
    const rt = await requestToken(open)
    const verifier = verifierFrom((await decide(rt, 'allow')).text)
    try {
      offsetMs = 9 * 60_000
      expect((await exchange(open, rt, verifier)).status).toBe(200)
    } finally {
      offsetMs = 0
    }
  })
})
