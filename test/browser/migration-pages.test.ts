// The migration as its people live it, in Debian's Chromium (playwright-core): a client
// developer reads the developer guide and the live migration schedule (in UTC and in
// their own time zone); a user sees which of their tools still use WSSE or Basic and what
// will happen to them, when each authorized application was last used, and changes the
// sign-in password, which signs out their other sessions. Screenshots go to
// test-artifacts/screenshots/.
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, launchChromium, screenshotDir } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { oauthFetch } from '../gateway/provider/helpers.js'

const haveChromium = chromiumAvailable('browser tests')
const screenshots = screenshotDir()

describe.skipIf(!haveChromium)('migration pages in a browser', () => {
  let stack: Stack
  let browser: Browser
  let carol: { password: string; api_password: string }

  beforeAll(async () => {
    stack = await startStack({ overrides: { migration: { usageFlushMs: 200, policyRefreshMs: 200 } } })
    carol = await stack.addUser('carol', 'Carol Ann')
    const put = await stack.admin('PUT', '/admin/policy', {
      basic: { state: 'brownout', windows: [{ start: '09:00', end: '12:00' }], sunset: '2031-06-30T00:00:00Z', schedule: [{ state: 'deny', from: '2031-07-01T00:00:00Z' }] },
      wsse: { state: 'deprecate', sunset: '2031-03-31T00:00:00Z' },
    })
    expect(put.status).toBe(200)
    // A legacy client of Carol's (named by its User-Agent), and an OAuth application she uses.
    await fetch(`${stack.url}/api/statuses/update.json`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`carol:${carol.api_password}`).toString('base64')}`, 'user-agent': 'OldPhotoTool/2.1', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=haiku%3Dstill%20on%20Basic',
    })
    const c = await stack.addOAuthClient('carol', ['write_public'])
    const posted = await oauthFetch({ url: `${stack.url}/api/statuses/update.json`, consumer: { key: c.consumerKey, secret: c.consumerSecret }, token: { token: c.token, secret: c.tokenSecret }, form: { status: 'haiku=over OAuth' } })
    expect(posted.status).toBe(200)
    await new Promise((r) => setTimeout(r, 600)) // one usage flush
    browser = await launchChromium()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await stack?.close()
  })

  it('the developer guide: live hosts, the flow and every sample', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
    await page.goto(`${stack.url}/developers`)
    expect(await page.textContent('h1')).toBe("Developer guide: kigo's API over OAuth")
    expect(await page.textContent('#hosts')).toContain(`http://${stack.config.globalHost}`)
    for (const id of ['curl', 'python', 'node', 'perl', 'ruby']) expect(await page.isVisible(`section#${id} pre.source`)).toBe(true)
    expect(await page.textContent('#python pre.source')).toContain('from requests_oauthlib import OAuth1')
    await page.click('nav.toc >> text=Three-legged flow')
    expect(page.url()).toMatch(/#flow$/)
    await page.screenshot({ path: join(screenshots, 'developers.png'), fullPage: true })
    await page.close()
  }, 60_000)

  it('/migration: the live policy, in UTC and in the reader\'s time zone, linking to the guide', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, timezoneId: 'Asia/Tokyo', locale: 'en-US' })
    const page = await context.newPage()
    await page.goto(`${stack.url}/migration`)
    const basic = page.locator('#policy-basic')
    expect(await basic.locator('.state').textContent()).toBe('brownout')
    const windows = (await basic.locator('dd ul.plain li').last().textContent())!
    // 09:00–12:00 UTC is 18:00–21:00 in Tokyo.
    expect(windows).toMatch(/09:00 \(06:00 PM GMT\+9 your time\)–12:00 \(09:00 PM GMT\+9 your time\) UTC every day/)
    expect(await basic.textContent()).toMatch(/deny from 2031-07-01 00:00 UTC \(Jul 1, 2031, 09:00 AM GMT\+9 your time\)/)
    expect(await page.textContent('#reader-tz')).toBe('Asia/Tokyo')
    expect(await page.locator('#policy-wsse .state').textContent()).toBe('deprecate')
    await page.screenshot({ path: join(screenshots, 'migration.png'), fullPage: true })
    await page.click('main >> text=developer guide')
    expect(page.url()).toBe(`${stack.url}/developers`)
    await context.close()
  }, 60_000)

  it('the account page: legacy tools with what will happen, applications\' last use, password change', async () => {
    const signIn = async (password: string) => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 900 } })
      const page = await context.newPage()
      await page.goto(`${stack.url}/account`)
      await page.fill('#username', 'carol')
      await page.fill('#password', password)
      await page.click('button[type=submit]')
      return { context, page }
    }
    const other = await signIn(carol.password)
    expect(other.page.url()).toBe(`${stack.url}/account`)
    const { context, page } = await signIn(carol.password)

    const row = page.locator('#legacy tbody tr', { hasText: 'OldPhotoTool/2.1' })
    expect(await row.locator('td').nth(1).textContent()).toBe('HTTP Basic authentication')
    expect(await row.locator('td').nth(2).textContent()).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC$/)
    const fate = (await row.locator('td').nth(3).textContent())!
    // The words of every surface (policy/outlook.ts); refused now when the test runs inside the window.
    expect(fate).toMatch(/^(Works, except every day 09:00–12:00 UTC \(brownouts\)|Refused now, until 12:00 UTC \(a brownout\); refused every day 09:00–12:00 UTC, working otherwise)\. It stops working on 2031-07-01 00:00 UTC\.$/)
    expect(await page.getAttribute('#legacy a >> text=What to tell the client\'s developer', 'href')).toBe('/developers#tell-your-developer')
    expect(await page.locator('#authorized .last-used').first().textContent()).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC$/)
    await page.screenshot({ path: join(screenshots, 'account-legacy.png'), fullPage: true })

    // The current password is required.
    await page.fill('#current_password', 'not my password')
    await page.fill('#new_password', 'a brand new passphrase')
    await page.fill('#confirm_password', 'a brand new passphrase')
    await page.click('#password button[type=submit]')
    expect(await page.textContent('#password .error')).toBe('Your current password is not right.')
    // The new one must follow the rule.
    await page.fill('#current_password', carol.password)
    await page.fill('#new_password', 'carol-2031!')
    await page.fill('#confirm_password', 'carol-2031!')
    await page.click('#password button[type=submit]')
    expect(await page.textContent('#password .error')).toBe('The password must not contain the user ID.')
    await page.fill('#current_password', carol.password)
    await page.fill('#new_password', 'a brand new passphrase')
    await page.fill('#confirm_password', 'a brand new passphrase')
    await page.click('#password button[type=submit]')
    expect(await page.textContent('.notice')).toBe('Your password was changed. You were signed out everywhere else.')
    await page.screenshot({ path: join(screenshots, 'password-changed.png'), fullPage: true })

    // The other session ended; this one goes on; the new password signs in, the old does not.
    await other.page.goto(`${stack.url}/account`)
    expect(other.page.url()).toMatch(/\/account\/login/)
    await page.reload()
    expect(page.url()).toMatch(/\/account(\?|#|$)/)
    const old = await signIn(carol.password)
    expect(await old.page.textContent('[role=alert]')).toBe('The user ID or password is not right.')
    const fresh = await signIn('a brand new passphrase')
    expect(fresh.page.url()).toBe(`${stack.url}/account`)
    for (const c of [other.context, context, old.context, fresh.context]) await c.close()
  }, 120_000)
})
