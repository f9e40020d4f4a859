// oauth_callback spellings against a registered callback (docs/security.md#oauth-callbacks):
// every spelling that a URL parser could read as another host is refused with 400
// parameter_rejected and a message naming the problem, and the callbacks that are
// accepted are stored and redirected to in the WHATWG parser's normalised form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { WebClient, csrfOf, oauthChallenge, oauthFetch } from './helpers.js'

let stack: GatewayApp
type Client = { key: string; secret: string }
let good: Client // registered https://good.example/cb
let idn: Client // registered https://bücher.example/cb
let open: Client // nothing registered
let alice: { password: string }

async function addApp(name: string, callback?: string): Promise<Client> {
  const r = await stack.admin<{ consumer_key: string; consumer_secret: string }>('POST', '/admin/apps', { name, owner: 'alice', scopes: ['read_public'], ...(callback ? { callback } : {}) })
  if (r.status !== 201) throw new Error(JSON.stringify(r.body))
  return { key: r.body.consumer_key, secret: r.body.consumer_secret }
}

beforeAll(async () => {
  stack = await gatewayApp()
  alice = await stack.addUser('alice', 'Alice')
  good = await addApp('Good', 'https://good.example/cb')
  idn = await addApp('Bücher', 'https://bücher.example/cb')
  open = await addApp('Open')
})

afterAll(async () => {
  await stack?.close()
})

const initiate = (consumer: Client, callback: string) => oauthFetch({ url: `${stack.url}/oauth/initiate`, consumer, oauth: { oauth_callback: callback } }, {}, stack.fetch)

/** The Location the user's browser is sent to after allowing a request token made with `callback`. */
async function redirectAfterAllow(consumer: Client, callback: string): Promise<string> {
  const res = await initiate(consumer, callback)
  expect(res.status, res.text).toBe(200)
  const token = res.form.get('oauth_token')!
  const web = new WebClient(stack.url, stack.fetch)
  const signedIn = await web.signIn(`/oauth/authorize?oauth_token=${encodeURIComponent(token)}`, 'alice', alice.password)
  const consent = await web.get(signedIn.headers.get('location')!)
  const decided = await web.post('/oauth/authorize', { csrf_token: csrfOf(consent.text), oauth_token: token, decision: 'allow' })
  expect(decided.status).toBe(303)
  return decided.headers.get('location')!
}

describe('a registered https://good.example/cb', () => {
  const refused: Array<[string, RegExp]> = [
    ['https://good.example\\@evil.example/', /backslash/],
    ['https://good.example\\evil.example/', /backslash/],
    ['https:\\\\good.example\\cb', /backslash/],
    ['https://good.example/\\\\evil.example/', /backslash/],
    ['https://good.example%5C@evil.example/', /backslash|user information/],
    ['https://good.example%5c.evil.example/', /backslash/],
    ['https://good.example@evil.example/', /user information/],
    ['https://good.example%40evil.example/', /user information/],
    ['https://user:pw@good.example/cb', /user information/],
    ['https://@good.example/cb', /user information/],
    ['https://good.ex\tample/cb', /control characters/],
    ['https://good.example\n.evil.example/', /control characters/],
    ['https://good.example/cb\r\nSet-Cookie: x=1', /control characters/],
    ['https://good.example /cb', /control characters/],
    ['https://good.example%09/cb', /encoded control characters/],
    ['https://good.example%0a.evil.example/', /encoded control characters/],
    ['https://good.example./cb', /scheme, host and port/],
    ['https://good.example:8443/cb', /scheme, host and port/],
    ['http://good.example/cb', /scheme, host and port/],
    ['https://good.example.evil.example/cb', /scheme, host and port/],
    ['https://evil.example/good.example/cb', /scheme, host and port/],
  ]

  it.each(refused)('refuses %j: 400 parameter_rejected, saying why', async (callback, why) => {
    const res = await initiate(good, callback)
    expect(res.status, res.text).toBe(400)
    expect(oauthChallenge(res.headers)).toMatchObject({ oauth_problem: 'parameter_rejected', oauth_parameters_rejected: 'oauth_callback' })
    expect(res.text).toMatch(why)
    expect(res.form.get('oauth_token')).toBeNull()
  })

  it('refuses the same spellings from an application with no registered callback', async () => {
    for (const [callback] of refused.slice(0, 16)) {
      const res = await initiate(open, callback)
      expect(res.status, callback).toBe(400)
    }
  })

  const normalised: Array<[string, string]> = [
    ['https://GOOD.EXAMPLE/cb', 'https://good.example/cb'],
    ['HTTPS://good.example/cb', 'https://good.example/cb'],
    ['https://good.example:443/cb', 'https://good.example/cb'],
    ['https://good.example/a/../cb?state=x', 'https://good.example/cb?state=x'],
    ['https://good.example/cb?next=%5C%40', 'https://good.example/cb?next=%5C%40'],
  ]

  it.each(normalised)('accepts %j and redirects to %j', async (callback, href) => {
    const location = await redirectAfterAllow(good, callback)
    expect(location.startsWith(`${href}${href.includes('?') ? '&' : '?'}oauth_token=`), location).toBe(true)
  })
})

describe('an internationalised registered host (https://bücher.example/cb)', () => {
  it('accepts its punycode and its upper-case spellings, redirecting to the punycode host', async () => {
    expect(await redirectAfterAllow(idn, 'https://xn--bcher-kva.example/cb')).toMatch(/^https:\/\/xn--bcher-kva\.example\/cb\?oauth_token=/)
    expect(await redirectAfterAllow(idn, 'https://BÜCHER.example/cb')).toMatch(/^https:\/\/xn--bcher-kva\.example\/cb\?oauth_token=/)
  })

  it('refuses a look-alike host', async () => {
    const res = await initiate(idn, 'https://bucher.example/cb')
    expect(res.status).toBe(400)
  })
})

describe('registering a callback', () => {
  it('refuses a backslash through the operator API', async () => {
    const r = await stack.admin('POST', '/admin/apps', { name: 'Bad', owner: 'alice', scopes: ['read_public'], callback: 'https://good.example\\@evil.example/' })
    expect(r.status).toBe(400)
    expect(JSON.stringify(r.body)).toContain('backslash')
  })
})
