// In Debian's Chromium on a phone's width: a date a page writes (`2099-12-31 00:00 UTC`, or
// in a <time>) is never broken across two lines, on the pages that are full of them (the
// account page, /migration, /account/moving, the login sites), at every width from 340
// to 420 px; and /account/moving fits 390 px. Screenshots go to
// test-artifacts/screenshots/dates-*.png.
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { chromiumAvailable, screenshotDir, suiteBrowser } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { basicHeader, form } from '../gateway/policy/signers.js'

const haveChromium = chromiumAvailable('the dates-on-a-phone browser test')

let stack: Stack
let alicePassword: string

beforeAll(async () => {
  stack = await startStack()
  const alice = await stack.addUser('alice', 'Alice')
  alicePassword = alice.password
  for (const ua of ['HaikuDroid/3.2 (Linux; Android 12)', 'A script from a friend/0.1']) {
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader('alice', alice.api_password), 'user-agent': ua }, body: 'status=hi' })
    expect(res.status).toBe(200)
  }
  const policy = await stack.admin('PUT', '/admin/policy', {
    basic: { state: 'deprecate', sunset: '2099-12-31T00:00:00Z', schedule: [{ state: 'brownout', from: '2099-06-01T00:00:00Z' }, { state: 'deny', from: '2099-12-31T00:00:00Z' }], windows: [{ start: '09:00', end: '12:00' }] },
    wsse: { state: 'deprecate', sunset: '2099-11-30T00:00:00Z', schedule: [{ state: 'deny', from: '2099-11-30T00:00:00Z' }] },
    login_api: { state: 'deprecate', sunset: '2099-10-31T00:00:00Z' },
  })
  expect(policy.status).toBe(200)
  // Reading the report writes the gateway's pending usage counts, so the account pages list the tools.
  expect((await stack.admin('GET', '/admin/usage')).status).toBe(200)
}, 60_000)

afterAll(async () => {
  await stack?.close()
})

/** Each date in the page's main text, or <time>, that the layout put on more than one line. */
function brokenDates(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const lines = (rects: DOMRectList) => new Set([...rects].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size
    const broken: string[] = []
    const walker = document.createTreeWalker(document.querySelector('main')!, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of (node.textContent ?? '').matchAll(/\d{4}-\d\d-\d\d(?: \d\d:\d\d UTC)?/g)) {
        const range = document.createRange()
        range.setStart(node, m.index)
        range.setEnd(node, m.index + m[0].length)
        if (lines(range.getClientRects()) > 1) broken.push(m[0])
      }
    }
    for (const t of document.querySelectorAll('main time')) if (lines(t.getClientRects()) > 1) broken.push(t.textContent ?? '')
    return broken
  })
}

describe.skipIf(!haveChromium)('dates on a phone', () => {
  const browser = suiteBrowser()

  it('no date breaks inside, from 340 to 420 px, and /account/moving fits 390 px', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    await page.goto(`${stack.url}/account/login`)
    await page.fill('#username', 'alice')
    await page.fill('#password', alicePassword)
    await page.click('button[type=submit]')
    await page.waitForURL(/\/account$/)
    for (const path of ['/account', '/migration', '/account/moving', '/account/sites']) {
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(`${stack.url}${path}`)
      const found: string[] = []
      for (let width = 340; width <= 420; width += 2) {
        await page.setViewportSize({ width, height: 844 })
        for (const d of await brokenDates(page)) found.push(`${d} at ${width} px`)
      }
      expect(found, path).toEqual([])
    }
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${stack.url}/account/moving`)
    await page.screenshot({ path: join(screenshotDir(), 'dates-moving.png'), fullPage: true })
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth)
    expect(await page.locator('#your-tools').textContent()).toContain('HaikuDroid/3.2')
    const ask = await page.locator('#ask-text').inputValue()
    expect(ask).toContain('HaikuDroid/3.2 (Linux; Android 12)')
    expect(ask).toContain('A script from a friend/0.1')
    await context.close()
  })
})
