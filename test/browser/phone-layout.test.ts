// Every page kigo serves, in Debian's Chromium at 390 px (a phone): none is wider than the
// screen (no sideways scrolling), every page has the one shared header, the public pages
// lead to sign-in and to the developer guide, the "kigo" brand leads to the timeline, and
// instants read as people read them inside <time datetime>. Screenshots go to
// test-artifacts/screenshots/phone-*.png.
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumAvailable, screenshotDir, suiteBrowser } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { basicHeader, form, oauthHeader } from '../gateway/policy/signers.js'

const haveChromium = chromiumAvailable('the phone layout browser test')

let stack: Stack
let alicePassword: string
let consumerKey: string
let entryPath: string

beforeAll(async () => {
  stack = await startStack()
  const alice = await stack.addUser('alice', 'Alice')
  alicePassword = alice.password
  const url = `${stack.url}/api/statuses/update.json`
  // Long client names and words: what spills a table out of its card on a phone.
  const post = await fetch(url, {
    method: 'POST',
    headers: { ...form, ...basicHeader('alice', alice.api_password), 'user-agent': 'HaikuDroid/3.2 (Linux; Android 12; SM-G991B Build/SP1A.210812.016; wv) AppleWebKit/537.36' },
    body: 'status=haiku%3Dan+old+silent+pond+https%3A%2F%2Fexample.com%2Fa%2Fvery%2Flong%2Fpath%2Fthat%2Fgoes%2Fon%2Fand%2Fon%2Fand%2Fon',
  })
  expect(post.status).toBe(200)
  entryPath = new URL(((await post.json()) as { link: string }).link).pathname
  const client = await stack.addOAuthClient('alice', ['read_public', 'write_public'])
  consumerKey = client.consumerKey
  const viaOAuth = await fetch(url, { method: 'POST', headers: { ...form, ...oauthHeader(client, { url, method: 'POST', data: { status: 'o' } }, Date.now()), 'user-agent': 'ShinyClient/2.0' }, body: 'status=o' })
  expect(viaOAuth.status).toBe(200)
  const policy = await stack.admin('PUT', '/admin/policy', {
    basic: { state: 'deprecate', sunset: '2099-12-31T00:00:00Z', schedule: [{ state: 'deny', from: '2099-12-31T00:00:00Z' }], exceptions: [{ user: 'alice', client: 'HaikuDroid/3.2', until: '2099-01-01T00:00:00Z' }] },
    wsse: { state: 'brownout', windows: [{ start: '09:00', end: '12:00' }, { start: '21:00', end: '24:00' }] },
  })
  expect(policy.status).toBe(200)
  expect((await stack.admin('PUT', '/admin/users/alice/email', { email: 'alice.with.a.rather.long.address@example.com' })).status).toBe(200)
  // Populated tables: a login-API site and an OpenID Connect client of alice's, with long
  // names and URLs, so that the account pages' tables have rows and buttons to fit.
  const site = await stack.admin('POST', '/admin/sites', { name: 'A diary with a rather long name for a small screen', owner: 'alice', callback: 'https://a-rather-long-host-name.diary.example/login/callback/from/kigo' })
  expect(site.status).toBe(201)
  const rp = await stack.admin('POST', '/admin/oidc-clients', { name: 'A tea party with a long name', owner: 'alice', redirect_uris: ['https://a-rather-long-host-name.tea.example/oidc/callback/from/kigo'] })
  expect(rp.status).toBe(201)
  // Reading the report writes the gateway's pending usage counts, so the account page lists the tool.
  expect((await stack.admin('GET', '/admin/usage')).status).toBe(200)
}, 60_000)

afterAll(async () => {
  await stack?.close()
})

async function noSideScroll(page: Page, name: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
  await page.screenshot({ path: join(screenshotDir(), `phone-${name}.png`), fullPage: true })
  expect(scrollWidth, `${name} is ${scrollWidth} px wide at ${innerWidth} px`).toBeLessThanOrEqual(innerWidth)
}

describe.skipIf(!haveChromium)('every page at 390 px', () => {
  const browser = suiteBrowser()

  it('public pages and the 404 page: fit, one header, lead to sign-in and the guide, readable times', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    for (const [name, path, status] of [['home', '/', 200], ['user', '/alice/', 200], ['entry', entryPath, 200], ['keyword', '/keyword/haiku', 200], ['not-found', '/no-such-user/', 404]] as const) {
      expect((await page.goto(`${stack.url}${path}`))!.status(), path).toBe(status)
      await noSideScroll(page, name)
      expect(await page.locator('header.site').count(), path).toBe(1)
      expect(await page.locator('header.site a[href="/account"]').textContent(), path).toBe('Sign in')
      expect(await page.locator('header.site a[href="/developers"]').count(), path).toBe(1)
      expect(new URL((await page.locator('header.site a.brand').getAttribute('href'))!, stack.url).pathname, path).toBe('/')
    }
    await page.goto(`${stack.url}${entryPath}`)
    const time = page.locator('article.entry time').first()
    expect(await time.getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(await time.textContent()).toMatch(/^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}, \d\d:\d\d UTC$/)
    await context.close()
  })

  it('sign-in, the guide, /migration, the account, an application, authorize: fit, and "kigo" leads to the timeline', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    for (const [name, path] of [['login', '/account/login'], ['forgot', '/account/forgot'], ['developers', '/developers'], ['migration', '/migration'], ['authorize-unknown', '/oauth/authorize?oauth_token=unknown'], ['login-api-auth', '/auth']] as const) {
      await page.goto(`${stack.url}${path}`)
      await noSideScroll(page, name)
      expect(await page.locator('header.site a.brand').getAttribute('href'), path).toBe('/')
    }
    await page.goto(`${stack.url}/account/login`)
    await page.fill('#username', 'alice')
    await page.fill('#password', alicePassword)
    await page.click('button[type=submit]')
    await page.waitForURL(/\/account$/)
    await noSideScroll(page, 'account')
    // The header's "Sign out" is on the screen, not beyond its edge.
    const signOut = await page.locator('header.site button', { hasText: 'Sign out' }).boundingBox()
    expect(signOut!.x + signOut!.width).toBeLessThanOrEqual(390)
    expect(await page.locator('header.site a.brand').getAttribute('href')).toBe('/')
    expect(await page.locator('#legacy').textContent()).toContain('HaikuDroid/3.2')
    for (const [name, path] of [['application', `/account/apps/${consumerKey}`], ['sites', '/account/sites'], ['oidc-clients', '/account/oidc-clients'], ['developers-signed-in', '/developers'], ['migration-signed-in', '/migration']] as const) {
      await page.goto(`${stack.url}${path}`)
      await noSideScroll(page, name)
    }
    // OpenID Connect's consent page, as a site's visitor reaches it.
    const rp = await stack.admin<{ client_id: string }>('POST', '/admin/oidc-clients', { name: 'A site with a rather long name for a small screen', owner: 'alice', redirect_uris: ['https://tea.example/callback'], public: true })
    expect(rp.status).toBe(201)
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const authorize = new URL(`${stack.url}/oidc/auth`)
    for (const [k, v] of Object.entries({ client_id: rp.body.client_id, redirect_uri: 'https://tea.example/callback', response_type: 'code', scope: 'openid profile', state: 'phone', code_challenge: challenge, code_challenge_method: 'S256' })) authorize.searchParams.set(k, v)
    await page.goto(authorize.href)
    await page.waitForURL(/\/oidc\/interaction\//)
    expect(await page.content()).toContain('A site with a rather long name')
    await noSideScroll(page, 'oidc-consent')
    // Allowed, the site is in the account page's "Sites you sign in to" card, which fits too.
    // The redirect to the site (tea.example, which does not resolve here) fails in this tab;
    // the account page is opened in another tab of the same browser, so the two never race.
    await Promise.all([page.waitForEvent('requestfailed', (r) => r.url().startsWith('https://tea.example/callback')), page.click('button[value="allow"]')])
    const account = await context.newPage()
    await account.goto(`${stack.url}/account`)
    expect(await account.locator('#oidc-sites').textContent()).toContain('A site with a rather long name')
    await noSideScroll(account, 'account-with-sites')
    const revoke = await account.locator('#oidc-sites button', { hasText: 'Revoke' }).boundingBox()
    expect(revoke!.x + revoke!.width).toBeLessThanOrEqual(390)
    await context.close()
  })

  it('the operator dashboard and its sign-in: fit; the chart is whole (scaled, not cut off)', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    expect((await page.goto(`${stack.adminUrl}/admin/`))!.status()).toBe(401)
    await noSideScroll(page, 'dashboard-login')
    await page.fill('input[name="token"]', stack.config.adminToken)
    await page.click('button[type="submit"]')
    await page.waitForSelector('svg#method-chart')
    await noSideScroll(page, 'dashboard')
    const chart = await page.locator('svg#method-chart').boundingBox()
    const frame = await page.locator('#chart').boundingBox()
    expect(chart!.x).toBeGreaterThanOrEqual(frame!.x)
    expect(chart!.x + chart!.width).toBeLessThanOrEqual(frame!.x + frame!.width)
    // The policy cards: no word broken mid-word (each word of a cell's text fits its line).
    const broken = await page.$$eval('#policy td, #policy tbody th', (cells) => cells.filter((c) => (c as HTMLElement).scrollWidth > (c as HTMLElement).clientWidth + 1).length)
    expect(broken).toBe(0)
    expect(await page.locator('#policy td .outlook').count()).toBeGreaterThan(0)
    const words = await page.$$eval('#policy td .outlook', (ps) => ps.map((p) => {
      const range = document.createRange()
      const node = p.firstChild!
      const text = node.textContent ?? ''
      // Every word starts and ends on the same line (a line may end at a space or a hyphen).
      const split: string[] = []
      for (const m of text.matchAll(/[^\s\-–]{2,}/g)) {
        range.setStart(node, m.index)
        range.setEnd(node, m.index + m[0].length)
        if (range.getClientRects().length > 1) split.push(m[0])
      }
      return split
    }))
    expect(words.flat()).toEqual([])
    // The policy forms, open, and the preview of a change with its plan: fit too.
    await page.click('#policy-forms summary')
    await noSideScroll(page, 'dashboard-policy-forms')
    const form = page.locator('form.policy-form[data-method="basic"]')
    await form.locator('input[name="deny_from"]').fill('2099-03-01')
    await form.locator('button[type="submit"]').click()
    await page.waitForSelector('#policy-diff')
    await noSideScroll(page, 'dashboard-policy-preview')
    await context.close()
  })
})
