// The whole OAuth 1.0a flow as its users live it (docs/gateway.md#the-oauth-provider-and-the-account-pages): a person registers an
// application on the account pages and authorizes it in a real browser (Debian's
// Chromium through playwright-core), while an independent client library (npm `oauth`)
// obtains the request token, exchanges the verifier, posts an entry and reads
// applications/my. Screenshots of the pages go to test-artifacts/screenshots/.
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { OAuth } from 'oauth'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, launchChromium, screenshotDir } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'

const haveChromium = chromiumAvailable('browser tests')
const screenshots = screenshotDir()

type OAuthError = { statusCode: number; data?: string }

/**
 * The npm `oauth` client's callbacks as promises. A refusal rejects with the library's
 * `{ statusCode, data }` as it is: the tests read it (`refusal`).
 */
function settle<T>(start: (done: (err: unknown, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the library's refusal is not an Error; see above
    start((err, value) => (err ? reject(err) : resolve(value))),
  )
}

function requestToken(client: OAuth, scope: string): Promise<{ token: string; secret: string }> {
  return settle((done) => client.getOAuthRequestToken({ scope }, (err, token, secret) => done(err, { token, secret })))
}

function accessToken(client: OAuth, rt: { token: string; secret: string }, verifier: string): Promise<{ token: string; secret: string }> {
  return settle((done) => client.getOAuthAccessToken(rt.token, rt.secret, verifier, (err, token, secret) => done(err, { token, secret })))
}

function signedPost(client: OAuth, url: string, at: { token: string; secret: string }, body: Record<string, string>): Promise<string> {
  return settle((done) => client.post(url, at.token, at.secret, body, 'application/x-www-form-urlencoded', (err, data) => done(err, String(data))))
}

function signedGet(client: OAuth, url: string, at: { token: string; secret: string }): Promise<string> {
  return settle((done) => client.get(url, at.token, at.secret, (err, data) => done(err, String(data))))
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise
  } catch (err) {
    return err as OAuthError
  }
  throw new Error('expected the request to be refused')
}

/** A client's callback endpoint on 127.0.0.1: records each query it receives. */
async function callbackServer(): Promise<{ server: Server; url: string; next: () => Promise<URLSearchParams> }> {
  const waiting: Array<(q: URLSearchParams) => void> = []
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>client</title><p>Back at the client.</p>')
    waiting.shift()?.(q)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { server, url: `http://127.0.0.1:${port}/callback`, next: () => new Promise((resolve) => waiting.push(resolve)) }
}

describe.skipIf(!haveChromium)('OAuth flow in a browser', () => {
  let stack: Stack
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let cb: Awaited<ReturnType<typeof callbackServer>>
  let alice: { password: string }
  let app: { key: string; secret: string }
  /** The gateway's clock runs this far ahead (the expiry test moves it). */
  let offsetMs = 0
  const clock = () => Date.now() + offsetMs

  /** An npm `oauth` client of the registered application, its clock following the gateway's. */
  const client = (callback: string) => {
    const c = new OAuth(`${stack.url}/oauth/initiate`, `${stack.url}/oauth/token`, app.key, app.secret, '1.0', callback, 'HMAC-SHA1')
    ;(c as unknown as { _getTimestamp: () => number })._getTimestamp = () => Math.floor(clock() / 1000)
    return c
  }

  beforeAll(async () => {
    stack = await startStack({ now: clock })
    alice = await stack.addUser('alice', 'Alice Liddell')
    cb = await callbackServer()
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1000, height: 800 } })
    page = await context.newPage()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    cb?.server.close()
    await stack?.close()
  })

  it('signs in and registers an application on the account pages', async () => {
    await page.goto(`${stack.url}/account`)
    expect(new URL(page.url()).pathname).toBe('/account/login')
    await page.screenshot({ path: join(screenshots, 'login.png'), fullPage: true })
    await page.fill('input[name=username]', 'alice')
    await page.fill('input[name=password]', alice.password)
    await Promise.all([page.waitForURL(`${stack.url}/account`), page.click('button:text("Sign in")')])
    expect(await page.textContent('h1')).toBe('Your account')

    await page.fill('input[name=name]', 'Photo Diary')
    await page.fill('input[name=callback]', cb.url)
    await page.check('input[name=scope][value=read_public]')
    await page.check('input[name=scope][value=write_public]')
    // The post redirects to the page that shows the secret (once).
    await Promise.all([page.waitForURL(/\/account\/apps\/[A-Za-z0-9_-]+\/new-secret$/), page.click('button:text("Register")')])
    await page.screenshot({ path: join(screenshots, 'application.png'), fullPage: true })
    app = { key: (await page.textContent('#consumer_key'))!, secret: (await page.textContent('#consumer_secret'))! }
    expect(app.key).toMatch(/^[A-Za-z0-9_-]{20,}$/)
    expect(app.secret).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    // The copy button's script ran (the page's CSP allows it by its hash) and copies the secret.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url })
    const copy = page.locator('button[data-copy="consumer_secret"]')
    expect(await copy.isVisible()).toBe(true)
    await copy.click()
    await page.waitForFunction(() => document.querySelector('button[data-copy="consumer_secret"]')?.textContent === 'Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(app.secret)
    // A later visit shows no secret.
    await page.goto(`${stack.url}/account/apps/${app.key}`)
    expect(await page.locator('#consumer_secret').count()).toBe(0)
  })

  it('authorizes with Allow, then the client exchanges the verifier, posts an entry and reads applications/my', async () => {
    const c = client(cb.url)
    const rt = await requestToken(c, 'read_public,write_public')

    // A fresh browser session: the person signs in on the authorize page itself.
    await context.clearCookies()
    await page.goto(`${stack.url}/oauth/authorize?oauth_token=${encodeURIComponent(rt.token)}`)
    await page.fill('input[name=username]', 'alice')
    await page.fill('input[name=password]', alice.password)
    await Promise.all([page.waitForURL(/\/oauth\/authorize\?/), page.click('button:text("Sign in")')])
    expect(await page.textContent('h1')).toContain('Photo Diary')
    expect(await page.textContent('ul.scopes')).toContain('Post and delete entries')
    // Who registered it and how many people use it (nobody has authorized it yet).
    expect(await page.textContent('#registrant')).toBe('Registered by alice · nobody uses it yet')
    await page.screenshot({ path: join(screenshots, 'consent.png'), fullPage: true })

    const arrived = cb.next()
    await Promise.all([page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/), page.click('button:text("Allow")')])
    const q = await arrived
    expect(q.get('oauth_token')).toBe(rt.token)
    const verifier = q.get('oauth_verifier')!

    const at = await accessToken(c, rt, verifier)
    const entry = JSON.parse(await signedPost(c, `${stack.url}/api/statuses/update.json`, at, { status: 'kigo=posted after the browser said Allow' }))
    expect(entry).toMatchObject({ keyword: 'kigo', user: { id: 'alice', name: 'Alice Liddell' } })
    const me = JSON.parse(await signedGet(c, `${stack.url}/applications/my.json`, at))
    expect(me).toEqual({ url_name: 'alice', display_name: 'Alice Liddell', profile_image_url: `${stack.url}/users/alice/profile.png` })

    // The verifier is good once.
    const reused = await refusal(accessToken(c, rt, verifier))
    expect(reused.statusCode).toBe(401)
    expect(reused.data).toContain('token_rejected')

    await page.goto(`${stack.url}/account`)
    expect(await page.textContent('#authorized')).toContain('Photo Diary')
    await page.screenshot({ path: join(screenshots, 'account.png'), fullPage: true })
  })

  it('Deny sends the browser back with denied=<token>, and the client gets no access token', async () => {
    const c = client(cb.url)
    const rt = await requestToken(c, 'read_public')
    await page.goto(`${stack.url}/oauth/authorize?oauth_token=${encodeURIComponent(rt.token)}`)
    const arrived = cb.next()
    await Promise.all([page.waitForURL(/\/callback\?/), page.click('button:text("Deny")')])
    const q = await arrived
    expect(q.get('denied')).toBe(rt.token)
    expect(q.has('oauth_verifier')).toBe(false)
    const refused = await refusal(accessToken(c, rt, 'none'))
    expect(refused.statusCode).toBe(401)
    expect(refused.data).toContain('permission_denied')
  })

  it('oob: the page shows the verifier, which the client exchanges', async () => {
    const c = client('oob')
    const rt = await requestToken(c, 'read_public')
    await page.goto(`${stack.url}/oauth/authorize?oauth_token=${encodeURIComponent(rt.token)}`)
    await Promise.all([page.waitForURL(`${stack.url}/oauth/authorize`), page.click('button:text("Allow")')])
    const verifier = (await page.textContent('#oauth_verifier'))!.trim()
    await page.screenshot({ path: join(screenshots, 'verifier.png'), fullPage: true })
    const at = await accessToken(c, rt, verifier)
    expect(JSON.parse(await signedGet(c, `${stack.url}/applications/my.json`, at)).url_name).toBe('alice')
  })

  it('refuses a scope the application did not register (400 parameter_rejected)', async () => {
    const refused = await refusal(requestToken(client(cb.url), 'read_public,write_private'))
    expect(refused.statusCode).toBe(400)
    expect(JSON.parse(refused.data!).error.code).toBe('parameter_rejected')
  })

  it('refuses an expired request token on the authorize page and at the token endpoint', async () => {
    const c = client(cb.url)
    const rt = await requestToken(c, 'read_public')
    offsetMs = 11 * 60_000
    try {
      const res = await page.goto(`${stack.url}/oauth/authorize?oauth_token=${encodeURIComponent(rt.token)}`)
      expect(res?.status()).toBe(400)
      expect(await page.textContent('h1')).toBe('Request expired')
      const refused = await refusal(accessToken(c, rt, 'whatever'))
      expect(refused.statusCode).toBe(401)
      expect(refused.data).toContain('token_expired')
    } finally {
      offsetMs = 0
    }
  })

  it('refuses a form post from the signed-in browser without the CSRF token (403)', async () => {
    await page.goto(`${stack.url}/account`)
    // The browser context's own cookie jar: the session is there, the token is not.
    const res = await page.request.post(`${stack.url}/account/apps`, { form: { name: 'Forged', scope: 'read_public' }, maxRedirects: 0 })
    expect(res.status()).toBe(403)
    await page.reload()
    expect(await page.textContent('#applications')).not.toContain('Forged')
  })
})
