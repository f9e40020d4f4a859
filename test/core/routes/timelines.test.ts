// Timelines through HTTP (docs/api.md#timelines): every source, the list formats, replies, paging,
// since, sort=hot, and the forms without `/{id}` that need credentials.
import { afterAll, beforeAll, expect, test } from 'vitest'
import { form, images, multipart, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'
import { element, elements, fields, parseDocument } from '../../helpers/xml-client.js'

let h: Harness
type Entry = { id: string; text: string; keyword: string; favorited: number; replies?: Entry[]; user: { id: string; followers_count: number } }
const post = async (as: string, params: Record<string, string>, host?: string): Promise<Entry> => {
  const res = await h.call({ method: 'POST', url: '/api/statuses/update.json', as, ...form(params), ...(host ? { host } : {}) })
  expect(res.statusCode).toBe(200)
  return res.json()
}
const get = (url: string, as?: string | { user: string; scopes: string[] }) => h.call({ url, ...(as ? { as } : {}) })
const ids = (list: Entry[]) => list.map((e) => e.id)

let first: Entry, second: Entry, diary: Entry, reply1: Entry, reply2: Entry, elsewhere: Entry

describeEachBackend('timelines routes', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
    first = await post('alice', { status: 'haiku=first light' })
    second = await post('bob', { status: 'haiku=second wind' })
    diary = await post('alice', { status: 'my own page' })
    reply1 = await post('carol', { status: 'tanka=a reply', in_reply_to_status_id: first.id })
    reply2 = await post('bob', { status: 'another reply', in_reply_to_status_id: first.id })
    elsewhere = await post('alice', { status: 'haiku=on the global site' }, h.global)
  })
  afterAll(async () => {
    await h?.close()
  })

  test('public_timeline: the deployment\'s entries on keywords that are not user keywords, newest first, with replies oldest first', async () => {
    const res = await get('/api/statuses/public_timeline.json')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const list: Entry[] = res.json()
    expect(ids(list)).toEqual([reply1.id, second.id, first.id])
    expect(ids(list)).not.toContain(diary.id)
    expect(ids(list)).not.toContain(elsewhere.id)
    const top = list.find((e) => e.id === first.id)!
    expect(top.replies!.map((r) => r.id)).toEqual([reply1.id, reply2.id])
    // A reply is a full Entry without its own replies.
    expect(top.replies![0]).toMatchObject({ id: reply1.id, text: 'tanka=a reply', user: { id: 'carol' } })
    expect(top.replies![0]).not.toHaveProperty('replies')
    expect(list.find((e) => e.id === second.id)!.replies).toEqual([])
    const global: Entry[] = (await h.call({ url: '/api/statuses/public_timeline.json', host: h.global })).json()
    expect(ids(global)).toEqual([elsewhere.id])
  })

  test('XML: <statuses type="array"> with <status> items, one <replies> per reply holding its fields, none for no reply; an empty list is an empty root', async () => {
    const res = await get('/api/statuses/public_timeline.xml')
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8')
    expect(res.body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><statuses type="array"><status>/)
    // Read as the original's XML clients read it: each <replies> element is one reply.
    const root = parseDocument(res.body)
    const statuses = elements(root, 'status')
    expect(statuses.map((s) => fields(s).id)).toEqual([reply1.id, second.id, first.id])
    expect(elements(statuses[1]!, 'replies')).toEqual([])
    const replies = elements(statuses[2]!, 'replies')
    expect(replies.map((r) => fields(r).in_reply_to_status_id)).toEqual([first.id, first.id])
    expect(replies.map((r) => fields(r).id)).toEqual([...replies.map((r) => fields(r).id)].sort((a, b) => Number(a) - Number(b)))
    expect(fields(element(replies[0]!, 'user')).id).toEqual(expect.any(String))
    expect(fields(element(statuses[0]!, 'target'))).toMatchObject({ title: expect.any(String), word: expect.any(String) })
    const empty = await get('/api/statuses/keyword_timeline.xml?word=haiku&since=2099-01-01T00:00:00Z')
    expect(empty.body).toBe('<?xml version="1.0" encoding="UTF-8"?><statuses type="array"></statuses>')
  })

  test('JSONP wraps the array; errors keep their status and are wrapped too', async () => {
    const res = await get('/api/statuses/public_timeline.json?callback=cb.list&count=1')
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(res.body).toMatch(/^cb\.list\(\[\{"id":"/)
    const bad = await get('/api/statuses/public_timeline.json?callback=cb&count=0')
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toMatch(/^cb\(\{"error":\{"status":400,/)
  })

  test('count, page and max_id: pages stay the same while entries are added', async () => {
    const p2 = await get(`/api/statuses/public_timeline.json?count=1&page=2&max_id=${reply1.id}`)
    expect(ids(p2.json())).toEqual([second.id])
    await post('dave', { status: 'haiku=newer than the anchor' })
    const again = await get(`/api/statuses/public_timeline.json?count=1&page=2&max_id=${reply1.id}`)
    expect(again.json()).toEqual(p2.json())
    const beyond = await get('/api/statuses/public_timeline.json?count=200&page=100')
    expect(beyond.json()).toEqual([])
  })

  test.each([
    ['count=0', 'count'], ['count=201', 'count'], ['count=abc', 'count'], ['page=0', 'page'], ['page=101', 'page'],
    ['since=yesterday', 'since'], ['since=2026-02-31T00:00:00Z', 'since'], ['since=2026-11-21T09:30:00%2B09:00', 'since'],
    ['sort=best', 'sort'], ['max_id=x', 'max_id'],
  ])('%s: 400 naming the parameter', async (query, name) => {
    const res = await get(`/api/statuses/public_timeline.xml?${query}`)
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('<status>400</status>')
    expect(res.body).toContain(name)
  })

  test('since, in both date forms: entries older than it are left out, entries at it are kept', async () => {
    const all: Array<Entry & { created_at: string }> = (await get('/api/statuses/public_timeline.json')).json()
    const newest = all[0]!
    const iso = newest.created_at
    const imf = new Date(iso).toUTCString()
    for (const since of [iso, imf]) {
      const list: Entry[] = (await get(`/api/statuses/public_timeline.json?since=${encodeURIComponent(since)}`)).json()
      expect(list.length).toBeGreaterThanOrEqual(1)
      expect(list.every((e) => (e as Entry & { created_at: string }).created_at >= iso)).toBe(true)
    }
    const future = new Date(Date.now() + 3600_000).toUTCString()
    expect((await get(`/api/statuses/public_timeline.json?since=${encodeURIComponent(future)}`)).json()).toEqual([])
  })

  test('sort=hot: most stars first, then newest; favorited follows the requester', async () => {
    await h.call({ method: 'POST', url: `/api/favorites/create/${second.id}.json`, as: 'erin' })
    await h.call({ method: 'POST', url: `/api/favorites/create/${second.id}.json`, as: 'frank' })
    await h.call({ method: 'POST', url: `/api/favorites/create/${first.id}.json`, as: 'erin' })
    const hot: Entry[] = (await get('/api/statuses/keyword_timeline.json?word=haiku&sort=hot', 'erin')).json()
    expect(ids(hot).slice(0, 2)).toEqual([second.id, first.id])
    expect(hot[0]!.favorited).toBe(1)
    const anon: Entry[] = (await get('/api/statuses/keyword_timeline.json?word=haiku&sort=hot')).json()
    expect(anon.every((e) => e.favorited === 0)).toBe(true)
    const newest: Entry[] = (await get('/api/statuses/keyword_timeline.json?word=haiku&sort=new')).json()
    expect(newest[newest.length - 1]!.id).toBe(first.id)
  })

  test('keyword_timeline: ?word= and /{word} agree; a keyword nobody has posted to is an empty list', async () => {
    const a = await get('/api/statuses/keyword_timeline.json?word=haiku')
    const b = await get('/api/statuses/keyword_timeline/haiku.json')
    expect(a.statusCode).toBe(200)
    expect(b.json()).toEqual(a.json())
    expect(ids(a.json()).every((id) => id !== reply1.id)).toBe(true)
    const user = await get(`/api/statuses/keyword_timeline/${encodeURIComponent('id:alice')}`)
    expect(ids(user.json())).toEqual([diary.id])
    // docs/api-differences.md#empty-keywords: clients open a new keyword's page before its first entry.
    const unknown = await get('/api/statuses/keyword_timeline/nothing-here.xml')
    expect(unknown.statusCode).toBe(200)
    expect(unknown.body).toBe('<?xml version="1.0" encoding="UTF-8"?><statuses type="array"></statuses>')
    for (const url of ['/api/statuses/keyword_timeline/nothing-here.json', '/api/statuses/keyword_timeline.json?word=nothing-here', '/api/statuses/album/nothing-here.json', '/api/statuses/album.json?word=nothing-here']) {
      const res = await get(url)
      expect([url, res.statusCode, res.body]).toEqual([url, 200, '[]'])
    }
    expect((await get('/api/statuses/album/nothing-here.xml')).body).toContain('<statuses type="array"></statuses>')
    // keywords/show keeps its 404.
    expect((await get('/api/keywords/show.json?word=nothing-here')).json().error.code).toBe('keyword_not_found')
    expect((await get('/api/statuses/keyword_timeline.json')).statusCode).toBe(400)
  })

  test('user_timeline: /{id} for anyone; without it, the authenticated user, with read_public or write_public', async () => {
    const res = await get('/api/statuses/user_timeline/alice.json')
    expect(ids(res.json())).toEqual([elsewhere.id, diary.id, first.id])
    expect((await get('/api/statuses/user_timeline/nobody-here.json')).json().error.code).toBe('user_not_found')
    // docs/api-differences.md#user-ids-written-as-keywords: a user ID written as the user's keyword, in the path and in `id`.
    for (const url of ['/api/statuses/user_timeline/id:alice.json', `/api/statuses/user_timeline/${encodeURIComponent('id:alice')}.json`, '/api/statuses/user_timeline.json?id=id:alice', '/api/statuses/user_timeline/alice.json?id=id%3Aalice']) {
      const same = await get(url)
      expect([url, same.statusCode, ids(same.json())]).toEqual([url, 200, ids(res.json())])
    }
    expect((await get('/api/statuses/user_timeline/id:nobody-here.json')).json().error.code).toBe('user_not_found')
    expect((await get('/api/statuses/user_timeline/id:bob.json?id=alice')).json().error.code).toBe('conflicting_id')
    expect((await get('/api/statuses/user_timeline/id:.json')).statusCode).toBe(404)
    expect((await get('/api/statuses/user_timeline/x.y.json')).statusCode).toBe(404)
    const anon = await get('/api/statuses/user_timeline.json')
    expect(anon.statusCode).toBe(401)
    const mine = await get('/api/statuses/user_timeline.json', { user: 'alice', scopes: ['read_public'] })
    expect(mine.json()).toEqual(res.json())
    expect((await get('/api/statuses/user_timeline.json', { user: 'alice', scopes: ['write_public'] })).statusCode).toBe(200)
    const narrow = await get('/api/statuses/user_timeline.xml', { user: 'alice', scopes: ['write_private'] })
    expect(narrow.statusCode).toBe(403)
    expect(narrow.body).toContain('<status>403</status>')
  })

  test('friends_timeline: entries by followed users and on followed keywords, and the user\'s own', async () => {
    const own = await post('gina', { status: 'kigo=gina writes' })
    expect((await h.call({ method: 'POST', url: '/api/friendships/create/bob.json', as: 'gina' })).statusCode).toBe(200)
    expect((await h.call({ method: 'POST', url: '/api/keywords/create.json?word=tanka', as: 'gina' })).statusCode).toBe(200)
    const list: Entry[] = (await get('/api/statuses/friends_timeline/gina.json')).json()
    const expected = [own.id, reply2.id, reply1.id, second.id]
    expect(ids(list)).toEqual(expected)
    expect(list.find((e) => e.user.id === 'bob')!.user.followers_count).toBe(1)
    expect(ids((await get('/api/statuses/friends_timeline.json', 'gina')).json())).toEqual(expected)
    expect((await get('/api/statuses/friends_timeline.json')).statusCode).toBe(401)
  })

  test('album: entries that carry photos, all or by keyword', async () => {
    const photo = await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...multipart([['keyword', 'photos'], ['file', { bytes: images.png }]]) })
    expect(photo.statusCode).toBe(200)
    const id = photo.json().id
    expect(ids((await get('/api/statuses/album.json')).json())).toEqual([id])
    expect(ids((await get('/api/statuses/album/photos.json')).json())).toEqual([id])
    expect(ids((await get('/api/statuses/album.json?word=photos')).json())).toEqual([id])
    expect((await get('/api/statuses/album/haiku.json')).json()).toEqual([])
    expect((await get('/api/statuses/album/no-such-word.json')).json()).toEqual([])
  })

  test('a wrong method is 405 with Allow; an unknown extension 404', async () => {
    const res = await h.call({ method: 'PUT', url: '/api/statuses/public_timeline.json' })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD, POST')
    expect((await get('/api/statuses/public_timeline.html')).statusCode).toBe(404)
  })
})

describeEachBackend('sort=hot between refreshes', routeBackends, (storage) => {
  let hh: Harness
  beforeAll(async () => {
    hh = await startHarness({ core: { hotRefreshSeconds: 1 } }, storage)
  })
  afterAll(async () => {
    await hh?.close()
  })
  const postAs = async (as: string, status: string): Promise<Entry> => (await hh.call({ method: 'POST', url: '/api/statuses/update.json', as, ...form({ status }) })).json()
  const star = async (as: string, id: string) => expect((await hh.call({ method: 'POST', url: `/api/favorites/create/${id}.json`, as })).statusCode).toBe(200)
  const hot = async (query = ''): Promise<Entry[]> => (await hh.call({ url: `/api/statuses/keyword_timeline/spring.json?sort=hot${query}` })).json<Entry[]>()

  test('the order is kept until a refresh old, the entries shown are fresh; a query with max_id is ranked on its own', async () => {
    const a = await postAs('alice', 'spring=plum')
    const b = await postAs('bob', 'spring=cherry')
    await star('carol', a.id)
    expect(ids(await hot())).toEqual([a.id, b.id])
    await star('carol', b.id)
    await star('dave', b.id)
    // Within the refresh period: the order as it was, the entries as they are now (dave's star shows).
    const kept: Entry[] = (await hh.call({ url: '/api/statuses/keyword_timeline/spring.json?sort=hot', as: 'dave' })).json()
    expect(ids(kept)).toEqual([a.id, b.id])
    expect(kept.map((e) => e.favorited)).toEqual([0, 1])
    // A query with max_id is ranked now.
    expect(ids(await hot(`&max_id=${b.id}`))).toEqual([b.id, a.id])
    await new Promise((r) => setTimeout(r, 1100))
    await hot()
    await expect.poll(async () => ids(await hot()), { timeout: 3000 }).toEqual([b.id, a.id])
  })
})
