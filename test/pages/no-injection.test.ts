// Text people and clients choose (a user's name, a keyword, an application's name, a login
// site's name and callback) reaches the pages as text: a browser sees it, never markup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { WebClient, csrfOf } from '../gateway/provider/helpers.js'

const evil = `x"><script>alert(1)</script><img src=x onerror=alert(2)>'`
const escaped = 'x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#39;'

/** No element or attribute the evil text would have made. */
function expectInert(page: string): void {
  expect(page).not.toContain('<script>alert(1)')
  expect(page).not.toContain('<img src=x')
  expect(page).toContain(escaped)
}

let stack: Stack
let web: WebClient

beforeAll(async () => {
  stack = await startStack()
  const mallory = await stack.addUser('mallory', evil)
  const basic = 'Basic ' + Buffer.from(`mallory:${mallory.api_password}`).toString('base64')
  const post = await fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ keyword: evil, status: 'hello' }).toString(),
  })
  expect(post.status).toBe(200)
  web = new WebClient(stack.url)
  expect((await web.signIn('/account/login', 'mallory', mallory.password)).status).toBe(303)
})

afterAll(async () => {
  await stack?.close()
})

describe('chosen text cannot inject markup', () => {
  it('a user name and a keyword on the public pages', async () => {
    for (const path of ['/', '/mallory/', `/keyword/${encodeURIComponent(evil)}`]) {
      const res = await fetch(stack.url + path)
      expect(res.status).toBe(200)
      expectInert(await res.text())
    }
  })

  it("an application's name on the account page and the application page", async () => {
    const account = await web.get('/account')
    const made = await web.postAndFollow('/account/apps', { csrf_token: csrfOf(account.text), name: evil, callback: '', scope: 'read_public' })
    // The answer redirects to the application's page, its secret shown once; then a later visit.
    expect(made.posted).toBe(303)
    expect(made.status).toBe(200)
    expectInert(made.text)
    const key = /id="consumer_key">([^<]+)</.exec(made.text)![1]!
    const app = await web.get(`/account/apps/${key}`)
    expect(app.status).toBe(200)
    expectInert(app.text)
    expectInert((await web.get('/account')).text)
  })

  it("a login site's name, in text and in the form's value attribute after a refusal", async () => {
    const page = await web.get('/account/sites')
    const refused = await web.post('/account/sites', { csrf_token: csrfOf(page.text), name: evil, callback: 'ftp://x.example/' })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain(`value="${escaped}"`)
    expectInert(refused.text)
    const created = await web.postAndFollow('/account/sites', { csrf_token: csrfOf(page.text), name: evil, callback: 'https://site.example/cb' })
    expect(created.posted).toBe(303)
    expect(created.status).toBe(200)
    expectInert(created.text)
    expectInert((await web.get('/account/sites')).text)
  })

  it('the operator dashboard shows the user as text', async () => {
    const res = await fetch(`${stack.adminUrl}/admin/`, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain('<script>alert(1)')
    expect(text).not.toContain('<img src=x')
  })
})
