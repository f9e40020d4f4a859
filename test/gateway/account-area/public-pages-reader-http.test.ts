// The public pages (the timeline, a user's page, an entry, a keyword page), served by the
// core through the gateway, name a reader signed in to the account area: their account
// and "Sign out" in the header instead of "Sign in", kept by their browser only. Nothing a
// request sends itself (identity headers, a made-up or expired cookie) signs anyone in,
// and the session never authenticates an API request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../helpers/stack.js'
import { basicHeader, form } from '../policy/signers.js'
import { WebClient } from '../provider/helpers.js'

let clock = Date.parse('2030-03-01T08:00:00Z')
let stack: Stack
let alice: { password: string; api_password: string }
let bobbyPassword: string
let entryPath: string

const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }
const pages = () => ['/', '/alice/', '/keyword/spring', entryPath]

/** A browser's navigation to `path` with `headers` (the cookie among them). */
async function open(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.url}${path}`, { headers: { ...browser, ...headers }, redirect: 'manual' })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, header: text.slice(text.indexOf('<header'), text.indexOf('</header>')) }
}

const cookieOf = (web: WebClient) => ({ cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ') })

async function signedIn(): Promise<WebClient> {
  const web = new WebClient(stack.url)
  expect((await web.signIn('/account/login', 'alice', alice.password)).status).toBe(303)
  return web
}

function expectSignedOut(page: Awaited<ReturnType<typeof open>>, path: string) {
  expect(page.status, path).toBe(200)
  expect(page.header, path).toContain('<a class="signin" href="/account">Sign in</a>')
  expect(page.header, path).not.toContain('Alice (alice)')
  expect(page.headers.get('cache-control'), path).not.toContain('private')
}

beforeAll(async () => {
  stack = await startStack({ now: () => clock })
  alice = await stack.addUser('alice', 'Alice')
  bobbyPassword = (await stack.addUser('bobby', 'Bobby')).password
  const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader('alice', alice.api_password) }, body: 'keyword=spring&status=cherry+blossoms' })
  expect(res.status).toBe(200)
  entryPath = new URL(((await res.json()) as { link: string }).link).pathname
})

afterAll(async () => {
  await stack?.close()
})

describe('a public page and its reader', () => {
  it('a signed-in reader sees their name, their account and "Sign out", never "Sign in", on a page kept private to them', async () => {
    const cookie = cookieOf(await signedIn())
    for (const path of pages()) {
      const page = await open(path, cookie)
      expect(page.status, path).toBe(200)
      expect(page.header, path).toContain('Alice (alice)')
      expect(page.header, path).toContain('<a href="/account">Your account</a>')
      expect(page.header, path).toContain('<a href="/account/logout">Sign out</a>')
      expect(page.text, path).not.toContain('Sign in')
      expect(page.headers.get('cache-control'), path).toBe('private, no-cache')
      expect(page.headers.get('vary'), path).toContain('Cookie')
    }
    expect((await open('/alice/', cookie)).text).toContain('cherry blossoms')
  })

  it('a visitor sees "Sign in", on a page that says it varies with the cookie', async () => {
    for (const path of pages()) {
      const page = await open(path)
      expectSignedOut(page, path)
      expect(page.headers.get('cache-control'), path).toBe('no-cache')
      expect(page.headers.get('vary'), path).toContain('Cookie')
    }
  })

  it('identity headers a request sends itself sign no one in, nor change who a signed-in reader is', async () => {
    const forged = { 'x-kigo-user': 'alice', 'x-kigo-user-name': 'Alice', 'x-kigo-auth-method': 'session', 'x-kigo-consumer': '', 'x-kigo-scopes': '' }
    const bobby = new WebClient(stack.url)
    expect((await bobby.signIn('/account/login', 'bobby', bobbyPassword)).status).toBe(303)
    for (const path of pages()) {
      expectSignedOut(await open(path, forged), path)
      const asBobby = await open(path, { ...forged, ...cookieOf(bobby) })
      expect(asBobby.header, path).toContain('Bobby (bobby)')
      expect(asBobby.header, path).not.toContain('Alice')
    }
  })

  it('a made-up cookie, or one of another deployment, signs no one in', async () => {
    const web = await signedIn()
    const value = web.cookies.get('kigo_session')!
    // The last character changed: the deployment's binding no longer verifies.
    const tampered = value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A')
    expect((await open('/', { cookie: `kigo_session=${value}` })).header).toContain('Alice (alice)')
    for (const cookie of ['kigo_session=nothing', `kigo_session=${tampered}`, `kigo_session=${value.slice(0, -43)}`]) {
      expectSignedOut(await open('/', { cookie }), cookie)
    }
    // Issued at the domestic deployment, the cookie is no session at the global one.
    const global = await fetch(`${stack.globalUrl}/`, { headers: { ...browser, cookie: `kigo_session=${value}` } })
    const text = await global.text()
    expect(text).toContain('Sign in')
    expect(text).not.toContain('Alice (alice)')
  })

  it('an expired session is a visitor again', async () => {
    const cookie = cookieOf(await signedIn())
    expect((await open('/', cookie)).header).toContain('Alice (alice)')
    clock += 13 * 60 * 60 * 1000
    expectSignedOut(await open('/', cookie), '/')
  })

  it('"Sign out" asks once, with the account\'s own form, and the pages then say "Sign in"', async () => {
    const web = await signedIn()
    const ask = await web.get('/account/logout')
    expect(ask.status).toBe(200)
    expect(ask.text).toContain('Sign out of kigo?')
    const token = /<main[\s\S]*name="csrf_token" value="([^"]+)"/.exec(ask.text)?.[1]
    expect(token).toBeDefined()
    const cookie = cookieOf(web)
    expect((await web.post('/account/logout', { csrf_token: token! })).status).toBe(303)
    expectSignedOut(await open('/', cookieOf(web)), '/')
    // The old cookie, sent again, names no one either: the session is gone from the store.
    expectSignedOut(await open('/', cookie), '/')
    // Nobody signed in: the sign-in form.
    const visitor = await new WebClient(stack.url).get('/account/logout')
    expect(visitor.status).toBe(303)
    expect(visitor.headers.get('location')).toBe('/account/login')
  })

  it('the account session never authenticates an API request', async () => {
    const cookie = cookieOf(await signedIn())
    expect((await open('/', cookie)).header).toContain('Alice (alice)')
    const res = await fetch(`${stack.url}/api/statuses/friends_timeline.json`, { headers: { ...browser, ...cookie } })
    expect(res.status).toBe(401)
    await res.text()
  })
})
