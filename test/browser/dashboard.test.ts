// The operator dashboard (docs/gateway.md#the-operator-api-and-dashboard) at GET /admin/ on the operator port: its sign-in
// (bearer token, or a form that sets an HttpOnly SameSite=Strict session cookie), then in
// Debian's Chromium: the chart of requests per auth method, the legacy-usage table, the
// policy and the next scheduled change, and a change of the policy through its form (preview,
// then Apply). Screenshots go to test-artifacts/screenshots/.
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, screenshotDir, suiteBrowser } from '../helpers/browser.js'
import { startStack, type Stack } from '../helpers/stack.js'
import { basicHeader, form, oauthHeader, wsseHeader } from '../gateway/policy/signers.js'
import { parseSetCookie } from '../helpers/set-cookie.js'
import { main } from '../../src/cli/kigo.js'

const haveChromium = chromiumAvailable('the dashboard browser test')

let stack: Stack

beforeAll(async () => {
  stack = await startStack()
  const alice = await stack.addUser('alice', 'Alice')
  const bob = await stack.addUser('bobby', 'Bob')
  const client = await stack.addOAuthClient('alice', ['write_public'])
  const url = `${stack.url}/api/statuses/update.json`
  const send = (headers: Record<string, string>, body: string) => fetch(url, { method: 'POST', headers: { ...form, ...headers }, body })
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) statuses.push((await send({ ...oauthHeader(client, { url, method: 'POST', data: { status: `o${i}` } }, Date.now()), 'user-agent': 'NewApp/2.0' }, `status=o${i}`)).status)
  for (let i = 0; i < 2; i++) statuses.push((await send({ ...basicHeader('alice', alice.api_password), 'user-agent': 'OldApp/1.0 <script>' }, `status=b${i}`)).status)
  statuses.push((await send(wsseHeader('bobby', bob.api_password, Date.now()), 'status=w&source=feed%20robot')).status)
  const shown = await fetch(`${stack.url}/api/statuses/show/1.json`)
  await shown.arrayBuffer()
  statuses.push(shown.status)
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200])
  const policy = await stack.admin('PUT', '/admin/policy', {
    basic: { state: 'deprecate', sunset: '2099-12-31T00:00:00Z', schedule: [{ state: 'deny', from: '2099-12-31T00:00:00Z' }] },
    wsse: { state: 'brownout', windows: [{ start: '09:00', end: '12:00' }, { start: '21:00', end: '24:00' }], exceptions: [{ user: 'bobby', until: '2099-01-01T00:00:00Z' }] },
  })
  expect(policy.status).toBe(200)
  expect((await stack.admin('PUT', '/admin/users/alice/email', { email: 'alice@example.com' })).status).toBe(200)
})

afterAll(async () => {
  await stack?.close()
})

const dashboard = () => `${stack.adminUrl}/admin/`

describe('dashboard sign-in over HTTP', () => {
  it('answers a visitor without a token with the sign-in form (401), no data', async () => {
    const res = await fetch(dashboard())
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await res.text()
    expect(html).toContain('name="token"')
    expect(html).not.toContain('alice')
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
  })

  it('serves the dashboard to the bearer token', async () => {
    const res = await fetch(dashboard(), { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<svg')
    expect(html).toContain('OldApp/1.0 &lt;script&gt;')
    expect(html).not.toContain('<script>')
  })

  it('sets an HttpOnly SameSite=Strict session for the right token only; the JSON API does not take it', async () => {
    const login = (token: string, headers: Record<string, string> = {}) =>
      fetch(`${stack.adminUrl}/admin/login`, { method: 'POST', headers: { ...form, ...headers }, body: new URLSearchParams({ token }), redirect: 'manual' })
    const wrong = await login('not-the-admin-token')
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect(await wrong.text()).toContain('not valid')
    expect((await login(stack.config.adminToken, { origin: 'http://evil.example' })).status).toBe(403)

    const ok = await login(stack.config.adminToken)
    expect(ok.status).toBe(303)
    expect(ok.headers.get('location')).toBe('/admin/')
    const setCookie = ok.headers.get('set-cookie') ?? ''
    expect(parseSetCookie(setCookie)).toEqual({ name: 'kigo_admin_session', value: expect.stringMatching(/^[^;]+$/), attributes: { path: '/admin', 'max-age': String(12 * 3600), httponly: true, samesite: 'Strict' } })
    expect(setCookie).not.toContain(stack.config.adminToken)
    const cookie = setCookie.split(';')[0]!

    // Each answer read to its end: an unread one keeps its connection busy, and the
    // operator app's close would wait for it.
    const status = async (res: Promise<Response>) => {
      const answer = await res
      await answer.arrayBuffer()
      return answer.status
    }
    expect(await status(fetch(dashboard(), { headers: { cookie } }))).toBe(200)
    expect(await status(fetch(dashboard(), { headers: { cookie: `${cookie.slice(0, -2)}xx` } }))).toBe(401)
    expect(await status(fetch(`${stack.adminUrl}/admin/usage`, { headers: { cookie } }))).toBe(401)
    expect(await status(fetch(`${stack.adminUrl}/admin/nothing-here`))).toBe(401)

    const out = await fetch(`${stack.adminUrl}/admin/logout`, { method: 'POST', headers: { cookie }, redirect: 'manual' })
    expect(out.status).toBe(303)
    expect(parseSetCookie(out.headers.get('set-cookie') ?? '')).toMatchObject({ name: 'kigo_admin_session', value: '', attributes: { path: '/admin', 'max-age': '0', httponly: true, samesite: 'Strict' } })
  })
})

describe('the usage table and its CSV', () => {
  it('agree: the link keeps the filters (Basic and WSSE by default), the CSV has the rows and the columns of the table', async () => {
    const bearer = { authorization: `Bearer ${stack.config.adminToken}` }
    for (const query of ['', '?method=wsse', '?client=oldapp&moved=no']) {
      const html = await (await fetch(`${dashboard()}${query}`, { headers: bearer })).text()
      const href = /<a href="([^"]+)" download>/.exec(html)![1]!.replace(/&amp;/g, '&')
      expect(href).toMatch(/^\/admin\/usage-table\.csv\?method=(legacy|wsse)/)
      const table = html.slice(html.indexOf('id="usage-table"'), html.indexOf('</table>', html.indexOf('id="usage-table"')))
      const headings = [...table.matchAll(/<th>([^<]+)<\/th>/g)].map((m) => m[1])
      const tableRows = [...table.matchAll(/<td data-label="User"><code[^>]*>([^<]+)<\/code><\/td>[^]*?<td data-label="Client">([^<]+)<\/td>[^]*?<td class="num" data-label="Accepted">(\d+)<\/td>/g)].map((m) => `${m[1]} ${m[2]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>')} ${m[3]}`)
      expect(tableRows.length).toBeGreaterThan(0)
      const csv = await (await fetch(`${stack.adminUrl}${href}`, { headers: bearer })).text()
      const [header, ...lines] = csv.trimEnd().split('\r\n')
      expect(header!.split(',')).toHaveLength(headings.length)
      const columns = header!.split(',')
      const at = (line: string, name: string) => line.split(',')[columns.indexOf(name)]
      expect(lines.map((l) => `${at(l, 'user')} ${at(l, 'client')} ${at(l, 'accepted')}`), query).toEqual(tableRows)
      // Nobody who already moved and no OAuth row is on the outreach list.
      expect(lines.every((l) => at(l, 'method') !== 'oauth')).toBe(true)
      // The command the page names prints the same CSV.
      const command = /<code>(kigo usage [^<]+)<\/code> prints the same/.exec(html)![1]!.replace(/&#39;/g, "'")
      const args = command.split(' ').slice(1).map((w) => w.replace(/^'(.*)'$/, '$1'))
      let printed = ''
      const code = await main(args, { KIGO_ADMIN_URL: stack.adminUrl, KIGO_ADMIN_TOKEN: stack.config.adminToken }, { stdout: { write: (t: string) => (printed += t) }, stderr: { write: () => undefined } })
      expect(code, command).toBe(0)
      expect(printed.trimEnd(), command).toBe(csv.trimEnd())
    }
  })

  it('filters by every method, the login API and where clients moved to included', async () => {
    const bearer = { authorization: `Bearer ${stack.config.adminToken}` }
    const page = await (await fetch(dashboard(), { headers: bearer })).text()
    const options = [...page.slice(page.indexOf('<select name="method">'), page.indexOf('</select>', page.indexOf('<select name="method">'))).matchAll(/<option value="([^"]+)"/g)].map((m) => m[1])
    expect(options).toEqual(['legacy', 'basic', 'wsse', 'login_api', 'oauth', 'oauth2', 'oidc'])
    const oauth = await (await fetch(`${dashboard()}?method=oauth`, { headers: bearer })).text()
    expect(oauth).toContain('<option value="oauth" selected>')
    expect(oauth).toContain('kigo usage --method oauth')
  })
})

describe.skipIf(!haveChromium)('dashboard in Chromium', () => {
  const browser = suiteBrowser()

  it('signs in with the token and shows the chart, the usage table, the policy and the next change', async () => {
    const context = await browser().newContext({ viewport: { width: 1200, height: 900 } })
    const page = await context.newPage()
    const external: string[] = []
    page.on('request', (r) => {
      if (!r.url().startsWith(stack.adminUrl)) external.push(r.url())
    })

    const first = await page.goto(dashboard())
    expect(first?.status()).toBe(401)
    await page.fill('input[name="token"]', stack.config.adminToken)
    await page.click('button[type="submit"]')
    await page.waitForSelector('svg#method-chart')
    expect(page.url()).toBe(dashboard())

    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === 'kigo_admin_session')
    expect(session?.httpOnly).toBe(true)
    expect(session?.sameSite).toBe('Strict')

    // The chart: an SVG whose coloured bars carry the counts of the requests sent above.
    const chart = page.locator('svg#method-chart')
    await expect(chart.count()).resolves.toBe(1)
    const bars = await page.$$eval('svg#method-chart rect[data-method]', (rects) =>
      rects.map((r) => ({ method: r.getAttribute('data-method')!, count: Number(r.getAttribute('data-count')), height: Number(r.getAttribute('height')) })))
    const perMethod: Record<string, number> = {}
    for (const b of bars) {
      expect(b.height).toBeGreaterThan(0)
      perMethod[b.method] = (perMethod[b.method] ?? 0) + b.count
    }
    expect(perMethod).toEqual({ oauth: 3, basic: 2, wsse: 1, none: 1 })
    expect(await chart.getAttribute('data-total')).toBe('7')

    // The legacy-usage table: Basic and WSSE users, their clients and counts; OAuth use noted.
    const rows = await page.$$eval('#usage-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())))
    const byUser = Object.fromEntries(rows.map((r) => [r[1], r]))
    // Alice uses OAuth, but from another client: this one has not moved.
    expect(byUser.alice?.slice(0, 8)).toEqual(['Basic', 'alice', 'alice@example.com', 'OldApp/1.0 <script>', '2', '0', '0', '0'])
    expect(byUser.alice?.[11]).toBe('not moved')
    expect(byUser.bobby?.slice(0, 5)).toEqual(['WSSE', 'bobby', '–', 'feed robot', '1'])
    expect(byUser.bobby?.[11]).toBe('not moved')
    // A user ID is on one line (it was broken as "alic/e" at this width).
    const split = await page.$$eval('#usage-table td[data-label="User"] code', (codes) => codes.filter((c) => {
      const range = document.createRange()
      range.selectNodeContents(c)
      return range.getClientRects().length > 1
    }).map((c) => c.textContent))
    expect(split).toEqual([])

    // Filters and sort through the page's own form (no script).
    await page.selectOption('form.filters select[name=method]', 'wsse')
    await page.click('form.filters button[type=submit]')
    await page.waitForURL(/method=wsse/)
    const filtered = await page.$$eval('#usage-table tbody tr', (trs) => trs.map((tr) => tr.querySelectorAll('td')[1]!.textContent.trim()))
    expect(filtered).toEqual(['bobby'])
    expect(await page.locator('#usage a[download]').getAttribute('href')).toBe('/admin/usage-table.csv?method=wsse&sort=last_seen')

    // The audit trail: the policy change made above.
    const audit = await page.locator('#audit-table').innerText()
    expect(audit).toContain('policy.update')
    expect(audit).toContain('user.set_email')

    // The policy and the next scheduled change.
    await page.goto(`${stack.adminUrl}/admin/`)
    const policyText = await page.locator('#policy').innerText()
    expect(policyText).toMatch(/Basic\s+deprecate/)
    expect(policyText).toContain('09:00–12:00, 21:00–24:00')
    expect(policyText).toMatch(/user bobby until\s+1 Jan 2099, 00:00 UTC/)
    expect(await page.locator('#next-change').innerText()).toBe('Next scheduled change: Basic becomes deny at 31 Dec 2099, 00:00 UTC')

    expect(external).toEqual([])
    await page.screenshot({ path: join(screenshotDir(), 'dashboard.png'), fullPage: true })
    await context.close()
  })

  it('fits a phone: no sideways scrolling, the tables as cards, chart labels readable', async () => {
    const context = await browser().newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    await page.goto(dashboard())
    await page.fill('input[name="token"]', stack.config.adminToken)
    await page.click('button[type="submit"]')
    await page.waitForSelector('svg#method-chart')
    const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }))
    expect(widths.doc).toBeLessThanOrEqual(widths.view)
    for (const table of ['#usage-table', '#audit-table', '#policy table']) {
      const box = await page.locator(table).boundingBox()
      expect(box!.x, table).toBeGreaterThanOrEqual(0)
      expect(box!.x + box!.width, table).toBeLessThanOrEqual(390)
    }
    // Each usage row is a card whose cells carry their column's name.
    expect(await page.locator('#usage-table tbody tr').first().locator('td').first().evaluate((td) => getComputedStyle(td, '::before').content)).toBe('"Method"')
    // The chart is scaled to the screen, whole (not cut off at the recent end), its labels at least 9 CSS pixels tall.
    const chartBox = await page.locator('svg#method-chart').boundingBox()
    expect(chartBox!.x + chartBox!.width).toBeLessThanOrEqual(390)
    const labelHeight = await page.locator('svg#method-chart text').first().evaluate((t) => t.getBoundingClientRect().height)
    expect(labelHeight).toBeGreaterThanOrEqual(9)
    await page.screenshot({ path: join(screenshotDir(), 'dashboard-phone.png'), fullPage: true })
    await context.close()
  })

  it('changes a method\'s policy through its form: the preview and its plan first, then Apply', async () => {
    const context = await browser().newContext({ viewport: { width: 1200, height: 900 } })
    const page = await context.newPage()
    await page.goto(dashboard())
    await page.fill('input[name="token"]', stack.config.adminToken)
    await page.click('button[type="submit"]')
    await page.waitForSelector('svg#method-chart')
    await page.click('#policy-forms summary')
    const form = page.locator('form.policy-form[data-method="wsse"]')
    expect(await form.locator('input[name="windows"]').inputValue()).toBe('09:00-12:00, 21:00-24:00')
    await form.locator('input[name="deny_from"]').fill('2099-03-01')
    await form.locator('button[type="submit"]').click()
    await page.waitForSelector('#policy-diff')
    expect(await page.locator('#policy-diff tr[data-field="schedule"]').innerText()).toContain('{"state":"deny","from":"2099-03-01 00:00 UTC"}')
    expect(await page.locator('#policy-plan li').innerText()).toMatch(/^wsse deny from 2099-03-01 00:00 UTC: 1 user \(\d with a contact e-mail, \d without\) not moved yet, /)
    await page.screenshot({ path: join(screenshotDir(), 'dashboard-policy-preview.png'), fullPage: true })
    const wsse = async () => (await stack.admin<{ wsse: { schedule: unknown[] } }>('GET', '/admin/policy')).body.wsse.schedule
    expect(await wsse()).toEqual([])
    await page.click('form.apply button[type="submit"]')
    await page.waitForSelector('#policy-applied')
    expect(page.url()).toBe(`${dashboard()}?applied=wsse#policy`)
    expect(await wsse()).toEqual([{ state: 'deny', from: '2099-03-01T00:00:00Z' }])
    await context.close()
  })
})
