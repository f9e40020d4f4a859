// Every HTML page kigo serves, as a person opens it: the text a reader sees must be
// finished text, never the source of a template (`${…}` left unexpanded). Code samples
// are code, and may hold template literals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../helpers/stack.js'
import { WebClient } from '../gateway/provider/helpers.js'

/** The page's prose: code samples (`<pre>`, `<code>`) may show template literals on purpose. */
function prose(html: string): string {
  return html.replace(/<pre[\s>][\s\S]*?<\/pre>/g, '').replace(/<code>[\s\S]*?<\/code>/g, '')
}

let stack: Stack
let web: WebClient
let consumerKey: string

beforeAll(async () => {
  stack = await startStack()
  const alice = await stack.addUser('alice', 'Alice')
  const basic = 'Basic ' + Buffer.from(`alice:${alice.api_password}`).toString('base64')
  const post = await fetch(`${stack.url}/api/statuses/update.json`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'HaikuDroid/3.2' },
    body: 'status=haiku%3Dan%20old%20silent%20pond',
  })
  expect(post.status).toBe(200)
  consumerKey = (await stack.addOAuthClient('alice', ['read_public', 'write_public'])).consumerKey
  web = new WebClient(stack.url)
  expect((await web.signIn('/account/login', 'alice', alice.password)).status).toBe(303)
})

afterAll(async () => {
  await stack?.close()
})

const publicPages = ['/', '/alice/', '/alice/1', '/keyword/haiku', '/no-such-user/', '/developers', '/migration', '/account/login', '/account/forgot', '/oauth/authorize?oauth_token=unknown']

describe('no page shows template source', () => {
  it.each(publicPages)('public page %s', async (path) => {
    const res = await fetch(stack.url + path)
    const text = await res.text()
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(prose(text)).not.toContain('${')
  })

  it.each(['/account', '/developers'])('signed-in page %s', async (path) => {
    const res = await web.get(path)
    expect(res.status).toBe(200)
    expect(prose(res.text)).not.toContain('${')
  })

  it('the application page', async () => {
    const res = await web.get(`/account/apps/${consumerKey}`)
    expect(res.status).toBe(200)
    expect(res.text).toContain(consumerKey)
    expect(prose(res.text)).not.toContain('${')
  })

  it.each(['/admin/', '/admin/?range=7d', '/admin/?method=basic'])('operator dashboard %s', async (path) => {
    const res = await fetch(stack.adminUrl + path, { headers: { authorization: `Bearer ${stack.config.adminToken}` } })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toMatch(/Clients beyond \d+ per user/)
    expect(prose(text)).not.toContain('${')
  })
})

describe('what a browser asks for besides pages', () => {
  it.each(['public', 'operator'])('/favicon.ico on the %s port: a small icon, cached', async (port) => {
    const res = await fetch(`${port === 'public' ? stack.url : stack.adminUrl}/favicon.ico`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/x-icon')
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400')
    const bytes = Buffer.from(await res.arrayBuffer())
    expect(bytes.subarray(0, 4).equals(Buffer.from([0, 0, 1, 0]))).toBe(true)
    expect(bytes.length).toBeLessThan(1024)
  })

  it.each(['/photos/alice/', '/photos/alice/999', '/photos/alice/999.png'])('a wrong photo address %s: the 404 page for a browser, JSON for an API client', async (path) => {
    const page = await fetch(stack.url + path, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } })
    expect(page.status).toBe(404)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await page.text()
    expect(html).toContain('<header class="site">')
    expect(html).toContain('href="/account"')
    const api = await fetch(stack.url + path, { headers: { accept: 'application/json' } })
    expect(api.status).toBe(404)
    expect(api.headers.get('content-type')).toMatch(/^application\/json/)
  })
})
