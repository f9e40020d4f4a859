// The public pages (docs/api.md#pages) in Debian's Chromium at 390 px, through gateway and core:
// `/`, an entry's link, its author, its keyword, and the next page, with JavaScript off.
// Screenshots go to test-artifacts/screenshots/.
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, screenshotDir, suiteBrowser } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { basicHeader, form } from '../gateway/policy/signers.js'

const haveChromium = chromiumAvailable('the public pages browser test')

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
  const alice = await stack.addUser('alice', 'Alice')
  const post = async (body: string) => {
    const res = await fetch(`${stack.url}/api/statuses/update.json`, { method: 'POST', headers: { ...form, ...basicHeader('alice', alice.api_password) }, body })
    expect(res.status).toBe(200)
  }
  await post('status=haiku%3Dan+old+silent+pond+%5B%5Bfrog%5D%5D')
  for (let i = 0; i < 24; i++) await post(`status=season%3Dentry+number+${i}`)
})

afterAll(async () => {
  await stack?.close()
})

describe.skipIf(!haveChromium)('public pages in Chromium', () => {
  const browser = suiteBrowser()

  it('opens /, follows an entry, its author, its keyword and the next page, at 390 px without script', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false })
    const page = await context.newPage()
    const violations: string[] = []
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()) })
    const dir = screenshotDir()
    const noSideScroll = async () => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)

    expect((await page.goto(`${stack.url}/`))!.status()).toBe(200)
    expect(await page.locator('article.entry').count()).toBe(20)
    await page.screenshot({ path: join(dir, 'pages-home.png'), fullPage: true })

    await page.locator('a[rel=next]').click()
    expect(page.url()).toMatch(/\?page=2&max_id=[0-9]+$/)
    await expect.poll(() => page.locator('article.entry').count()).toBe(5)
    expect(await page.textContent('main')).toContain('an old silent pond')
    await page.screenshot({ path: join(dir, 'pages-home-2.png'), fullPage: true })

    const entry = page.locator('article.entry', { hasText: 'an old silent pond' })
    await entry.locator('a.permalink').click()
    expect(page.url()).toMatch(/\/alice\/[0-9]+$/)
    expect(await page.textContent('main')).toContain('0 stars')
    await noSideScroll()
    await page.screenshot({ path: join(dir, 'pages-entry.png'), fullPage: true })

    await page.locator('a.keyword').first().click()
    expect(new URL(page.url()).pathname).toBe('/keyword/haiku')
    expect(await page.textContent('h1')).toBe('haiku')
    await page.screenshot({ path: join(dir, 'pages-keyword.png'), fullPage: true })

    await page.locator('a.author').first().click()
    expect(new URL(page.url()).pathname).toBe('/alice/')
    expect(await page.textContent('h1')).toContain('Alice')
    await noSideScroll()
    await page.screenshot({ path: join(dir, 'pages-user.png'), fullPage: true })

    const missing = await page.goto(`${stack.url}/nobody-here/`)
    expect(missing!.status()).toBe(404)
    expect(await page.textContent('h1')).toBe('Not found')
    expect(violations).toEqual([])
    await context.close()
  })
})
