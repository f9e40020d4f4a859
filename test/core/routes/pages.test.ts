// The public pages (docs/api.md#pages) through the core: every link the API returns opens HTML.
import { afterAll, beforeAll, expect, test } from 'vitest'
import { form, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'

let h: Harness
type Entry = { id: string; link: string; user: { url: string } }
let first: Entry, reply: Entry

describeEachBackend('pages', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
    const post = async (as: string, params: Record<string, string>) => (await h.call({ method: 'POST', url: '/api/statuses/update.json', as, ...form(params) })).json<Entry>()
    first = await post('alice', { status: 'haiku=<b>old pond</b> [[frog]]' })
    reply = await post('bob', { status: 'haiku=splash', in_reply_to_status_id: first.id })
    for (let i = 0; i < 25; i++) await post('carol', { status: `many=entry ${i}` })
  })
  afterAll(async () => {
    await h?.close()
  })

  const page = (url: string) => h.call({ url })
  const pathOf = (url: string) => new URL(url).pathname

  function expectHtml(res: Awaited<ReturnType<typeof page>>, status = 200) {
    expect(res.statusCode).toBe(status)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toContain("default-src 'none'")
    expect(res.headers['content-security-policy']).not.toContain('script-src')
    expect(res.body).not.toMatch(/<script/i)
    expect(res.body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
  }

  test('/ lists the newest entries with the html body, author, keyword, time and stars', async () => {
    const home = await page('/')
    expectHtml(home)
    expect(home.body).toContain('entry 24')
    expect(home.body).not.toContain('entry 4<')
    const res = await page('/?page=2')
    expectHtml(res)
    expect(res.body).toContain('&lt;b&gt;old pond&lt;/b&gt;')
    expect(res.body).toContain(`href="${first.link}"`)
    expect(res.body).toContain(`href="${first.user.url}"`)
    expect(res.body).toContain('/keyword/frog')
    expect(res.body).toContain('0 stars')
  })

  test('an entry\'s link opens its page with replies and star count', async () => {
    await h.call({ method: 'POST', url: `/api/favorites/create/${first.id}.json`, as: 'bob' })
    const res = await page(pathOf(first.link))
    expectHtml(res)
    expect(res.body).toContain('1 star')
    expect(res.body).toContain('splash')
    expect(res.body).toContain(`href="${reply.link}"`)
    expectHtml(await page(`/bob/${first.id}`), 404)
    expectHtml(await page('/alice/99999999'), 404)
  })

  test('a user\'s url opens their page with followers; a keyword page lists its entries; unknown ones are 404 pages', async () => {
    await h.call({ method: 'POST', url: '/api/friendships/create/alice.json', as: 'bob' })
    const user = await page(pathOf(first.user.url))
    expectHtml(user)
    expect(user.body).toContain('1 follower')
    const kw = await page('/keyword/haiku')
    expectHtml(kw)
    expect(kw.body).toContain('2 entries')
    expectHtml(await page('/nobody-here/'), 404)
    expectHtml(await page('/keyword/no-such'), 404)
  })

  test('lists page with ?page=, anchored so that later pages do not shift', async () => {
    const one = await page('/keyword/many')
    expect(one.body.match(/<article/g)).toHaveLength(20)
    const next = /<a rel="next" href="([^"]+)"/.exec(one.body)![1]!.replace(/&amp;/g, '&')
    expect(next).toMatch(/^\/keyword\/many\?page=2&max_id=[0-9]+$/)
    const two = await page(next)
    expect(two.body.match(/<article/g)).toHaveLength(5)
    expect(two.body).toContain('entry 0')
    expect(two.body).not.toContain('rel="next"')
    await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'carol', ...form({ status: 'many=a newer one' }) })
    // The same entries (the header's entry count does move on).
    const articles = (html: string) => html.slice(html.indexOf('<article'))
    expect(articles((await page(next)).body)).toBe(articles(two.body))
  })
})
