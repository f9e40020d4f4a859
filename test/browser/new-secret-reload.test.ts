// Reloading the page that shows a new secret, in a real browser (Debian's Chromium through
// playwright-core; docs/gateway.md#a-new-secret-is-shown-once): a registration and a
// rotation answer 303 to that page, so a reload shows the application without its secret
// and makes nothing new: still one application, no third secret, and the secret the
// application was running with keeps signing requests through the gateway for the overlap
// the page promised. The copy buttons copy the consumer key as well as the secret.
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, screenshotDir, suiteBrowser } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { form, oauthHeader } from '../gateway/policy/signers.js'

const haveChromium = chromiumAvailable('new-secret reload tests')
const screenshots = screenshotDir()

describe.skipIf(!haveChromium)('the page that shows a new secret, reloaded', () => {
  const browser = suiteBrowser()
  let stack: Stack
  let context: BrowserContext
  let page: Page
  let owner: { id: string; password: string }

  beforeAll(async () => {
    stack = await startStack()
    owner = await stack.addUser('reloader', 'Reloader')
  })

  afterAll(async () => {
    await context?.close()
    await stack?.close()
  })

  /** An entry posted through the gateway, signed by an independent OAuth library with `secret`. */
  const postWith = async (key: string, secret: string, token: { token: string; secret: string }) => {
    const url = `${stack.url}/api/statuses/update.json`
    const data = { status: 'kigo=still running' }
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...form, ...oauthHeader({ consumerKey: key, consumerSecret: secret, token: token.token, tokenSecret: token.secret }, { url, method: 'POST', data }, Date.now()) },
      body: new URLSearchParams(data).toString(),
    })
    await res.arrayBuffer()
    return res.status
  }

  const applicationsNamed = async (name: string) =>
    (await stack.admin<{ apps: Array<{ name: string }> }>('GET', `/admin/apps?owner=${owner.id}`)).body.apps.filter((a) => a.name === name).length

  it('registering: a reload shows no secret and registers nothing; rotating with 1 hour: a reload makes no third secret and the running one still signs', async () => {
    context = await browser().newContext({ viewport: { width: 1000, height: 800 } })
    page = await context.newPage()
    await page.goto(`${stack.url}/account/login`)
    await page.fill('input[name=username]', owner.id)
    await page.fill('input[name=password]', owner.password)
    await Promise.all([page.waitForURL(`${stack.url}/account`), page.click('button:text("Sign in")')])

    await page.fill('input[name=name]', 'Reloaded diary')
    await page.check('input[name=scope][value=write_public]')
    await Promise.all([page.waitForURL(/\/account\/apps\/[A-Za-z0-9_-]+\/new-secret$/), page.click('button:text("Register")')])
    const key = (await page.textContent('#consumer_key'))!
    const first = (await page.textContent('#consumer_secret'))!
    expect(first).toMatch(/^[A-Za-z0-9_-]{40,}$/)

    // Both copy buttons run (the page's CSP allows the script by its hash): the key's too.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url })
    await page.click('button[data-copy="consumer_key"]')
    await page.waitForFunction(() => document.querySelector('button[data-copy="consumer_key"]')?.textContent === 'Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key)

    await page.reload()
    expect(new URL(page.url()).pathname).toBe(`/account/apps/${key}/new-secret`)
    expect(await page.locator('#consumer_secret').count()).toBe(0)
    expect(await page.textContent('main')).toContain('The consumer secret was shown once')
    expect(await page.textContent('main')).not.toContain(first)
    expect(await applicationsNamed('Reloaded diary')).toBe(1)

    const t = await stack.admin<{ token: string; token_secret: string }>('POST', '/admin/tokens', { consumer: key, user: owner.id, scopes: ['write_public'] })
    expect(t.status).toBe(201)
    const token = { token: t.body.token, secret: t.body.token_secret }
    expect(await postWith(key, first, token)).toBe(200)

    // A new secret with 1 hour of overlap, then a reload.
    await Promise.all([page.waitForURL(`${stack.url}/account/apps/${key}/rotate-secret`), page.click('button:text("Make a new secret…")')])
    await page.selectOption('select[name=overlap]', '3600')
    await Promise.all([page.waitForURL(`${stack.url}/account/apps/${key}/new-secret`), page.click('button:text("Make a new secret")')])
    const second = (await page.textContent('#consumer_secret'))!
    expect(second).not.toBe(first)
    expect(await page.textContent('#shown-once')).toContain('The secret it replaced keeps working until')
    await page.screenshot({ path: join(screenshots, 'new-secret.png'), fullPage: true })

    await page.reload()
    expect(await page.locator('#consumer_secret').count()).toBe(0)
    expect(await page.textContent('main')).not.toContain(second)
    expect(await page.textContent('#previous_secret')).toContain('The secret it replaced keeps working until')
    await page.screenshot({ path: join(screenshots, 'new-secret-reloaded.png'), fullPage: true })

    // The secret the application was running with still signs, and so does the new one: no third was made.
    expect(await postWith(key, first, token)).toBe(200)
    expect(await postWith(key, second, token)).toBe(200)
    const audit = await stack.admin<{ events: Array<{ action: string }> }>('GET', `/admin/audit?target=${key}`)
    expect(audit.body.events.map((e) => e.action)).toEqual(['app.rotate_secret', 'app.create'])
    expect(await applicationsNamed('Reloaded diary')).toBe(1)
  })
})
