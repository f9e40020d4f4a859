// Users, follows and keywords through HTTP (docs/api.md#users-and-follows, docs/api.md#keywords).
import { afterAll, beforeAll, expect, test } from 'vitest'
import { form, parseXml, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'
import { elements, parseDocument } from '../../helpers/xml-client.js'

let h: Harness
const post = (url: string, as?: string | { user: string; scopes: string[] }) => h.call({ method: 'POST', url, ...(as ? { as } : {}) })
const get = (url: string, as?: string | { user: string; scopes: string[] }) => h.call({ url, ...(as ? { as } : {}) })

describeEachBackend('follows and keywords routes', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
    for (const [as, status] of [['alice', 'haiku=one'], ['bob', 'haiku=two'], ['bob', 'tanka=three'], ['carol', 'mine'], ['carol', 'Haiku Club=four']]) {
      expect((await h.call({ method: 'POST', url: '/api/statuses/update.json', as, ...form({ status: status! }) })).statusCode).toBe(200)
    }
  })
  afterAll(async () => {
    await h?.close()
  })

  test('friendships/create: the followed User with the real followers_count; repeating changes nothing', async () => {
    const res = await post('/api/friendships/create/alice.json', 'bob')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: 'alice', screen_name: 'alice', followers_count: 1 })
    expect((await post('/api/friendships/create/alice.json', 'bob')).json().followers_count).toBe(1)
    expect((await post('/api/friendships/create/alice.xml', 'carol')).body).toContain('<followers_count>2</followers_count>')
    const shown = await get('/api/friendships/show/alice.xml')
    expect(parseXml(shown.body)).toMatchObject({ user: { id: 'alice', followers_count: '2' } })
    // The count is in every User, the entries' authors included.
    const timeline = (await get('/api/statuses/user_timeline/alice.json')).json()
    expect(timeline[0].user.followers_count).toBe(2)
    expect((await get(`/api/statuses/show/${timeline[0].id}.json`)).json().user.followers_count).toBe(2)
  })

  test('following oneself is 400; an unknown user 404; anonymous 401; OAuth without write_public 403', async () => {
    const self = await post('/api/friendships/create/bob.json', 'bob')
    expect(self.statusCode).toBe(400)
    expect(self.json().error.code).toBe('cannot_follow_self')
    expect((await post('/api/friendships/create/nobody-here.json', 'bob')).json().error).toMatchObject({ status: 404, code: 'user_not_found' })
    expect((await post('/api/friendships/create/alice.json')).statusCode).toBe(401)
    expect((await post('/api/friendships/create/alice.json', { user: 'bob', scopes: ['read_public'] })).statusCode).toBe(403)
    expect((await get('/api/friendships/show/nobody-here.json')).statusCode).toBe(404)
  })

  test('a user ID may be written id:NAME in every path and id of follows and users (docs/api-differences.md#user-ids-written-as-keywords)', async () => {
    const shown = await get('/api/friendships/show/id:alice.json')
    expect(shown.statusCode).toBe(200)
    expect(shown.json()).toMatchObject({ id: 'alice' })
    expect((await get('/api/friendships/show.json?id=id:alice')).json()).toMatchObject({ id: 'alice' })
    const followed = await post('/api/friendships/create/id:carol.json', 'alice')
    expect(followed.statusCode).toBe(200)
    expect(followed.json()).toMatchObject({ id: 'carol' })
    expect((await get('/api/statuses/friends/id:alice.json')).json().map((u: { id: string }) => u.id)).toContain('carol')
    expect((await get('/api/statuses/followers/id:carol.json')).json().map((u: { id: string }) => u.id)).toContain('alice')
    expect((await get('/api/statuses/keywords/id:alice.json')).statusCode).toBe(200)
    // Oneself written as a keyword is still oneself.
    expect((await post('/api/friendships/create/id:bob.json', 'bob')).json().error.code).toBe('cannot_follow_self')
    const unfollowed = await post('/api/friendships/destroy/id:carol.json', 'alice')
    expect(unfollowed.json()).toMatchObject({ id: 'carol' })
    expect((await get('/api/friendships/show/id:nobody-here.json')).json().error.code).toBe('user_not_found')
    // Only the user keyword's own prefix: `ID:` and `id:id:` name no user.
    expect((await get('/api/friendships/show/ID:alice.json')).statusCode).toBe(404)
    expect((await get('/api/friendships/show/id:id:alice.json')).statusCode).toBe(404)
  })

  test('friendships/destroy: unfollowed; repeating succeeds', async () => {
    await post('/api/friendships/create/bob.json', 'alice')
    const res = await post('/api/friendships/destroy/bob.json', 'alice')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: 'bob', followers_count: 0 })
    expect((await post('/api/friendships/destroy/bob.json', 'alice')).statusCode).toBe(200)
  })

  test('statuses/friends and statuses/followers: Users, <users type="array"> in XML; without /{id} the requester', async () => {
    await post('/api/friendships/create/carol.json', 'bob')
    const friends = await get('/api/statuses/friends/bob.json')
    expect(friends.json().map((u: { id: string }) => u.id).sort()).toEqual(['alice', 'carol'])
    const followers = await get('/api/statuses/followers/alice.xml')
    expect(followers.body).toMatch(/<users type="array"><user><id>/)
    const doc = parseXml(followers.body) as { users: { user: Array<{ id: string }> } }
    expect(doc.users.user.map((u) => u.id).sort()).toEqual(['bob', 'carol'])
    expect((await get('/api/statuses/friends.json', 'bob')).json()).toEqual(friends.json())
    expect((await get('/api/statuses/followers.json')).statusCode).toBe(401)
    expect((await get('/api/friendships/show.json', { user: 'carol', scopes: ['read_public'] })).json().id).toBe('carol')
    expect((await get('/api/statuses/followers/dave-unknown.json')).statusCode).toBe(404)
    const none = await get('/api/statuses/friends/alice.xml')
    expect(none.body).toBe('<?xml version="1.0" encoding="UTF-8"?><users type="array"></users>')
    expect((await get('/api/statuses/friends/bob.json?page=0')).statusCode).toBe(400)
    expect((await get('/api/statuses/friends/bob.json?page=2')).json()).toEqual([])
  })

  test('keywords/show in both forms: the Keyword; url_name only for user keywords; unknown 404', async () => {
    const a = await get('/api/keywords/show.json?word=haiku')
    expect(a.statusCode).toBe(200)
    expect(a.json()).toEqual({
      word: 'haiku', title: 'haiku', link: `http://${h.domestic}/keyword/haiku`, entry_count: 2, followers_count: 0, related_keywords: [],
    })
    expect((await get('/api/keywords/show/haiku.json')).json()).toEqual(a.json())
    const spaced = await get('/api/keywords/show/Haiku%20Club.json')
    expect(spaced.json()).toMatchObject({ word: 'Haiku Club', link: `http://${h.domestic}/keyword/Haiku%20Club` })
    const user = await get(`/api/keywords/show.xml?word=${encodeURIComponent('id:carol')}`)
    expect(parseXml(user.body)).toMatchObject({ keyword: { word: 'id:carol', url_name: 'carol', entry_count: '1' } })
    expect(a.json()).not.toHaveProperty('url_name')
    expect((await get('/api/keywords/show.json?word=no-such')).json().error.code).toBe('keyword_not_found')
    expect((await get('/api/keywords/show.json')).statusCode).toBe(400)
    expect((await get('/api/keywords/show.json?word=haiku&without_related_keywords=1')).json()).not.toHaveProperty('related_keywords')
  })

  test('keywords/create and destroy: follow and unfollow, idempotent, both URL forms; statuses/keywords lists them', async () => {
    const res = await post('/api/keywords/create.json?word=haiku', 'dave')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ word: 'haiku', followers_count: 1 })
    expect((await post('/api/keywords/create/haiku.json', 'dave')).json().followers_count).toBe(1)
    await post('/api/keywords/create/tanka.json', 'dave')
    const mine = await get('/api/statuses/keywords.json', 'dave')
    expect(mine.json().map((k: { word: string }) => k.word).sort()).toEqual(['haiku', 'tanka'])
    const xml = await get('/api/statuses/keywords/dave.xml')
    expect(xml.body).toMatch(/<keywords type="array"><keyword><word>/)
    expect((await post('/api/keywords/destroy/tanka.json', 'dave')).json().followers_count).toBe(0)
    expect((await post('/api/keywords/destroy.json?word=tanka', 'dave')).statusCode).toBe(200)
    expect((await get('/api/statuses/keywords/dave.json')).json().map((k: { word: string }) => k.word)).toEqual(['haiku'])
    expect((await post('/api/keywords/create.json?word=never-posted', 'dave')).statusCode).toBe(404)
    expect((await post('/api/keywords/create.json?word=haiku')).statusCode).toBe(401)
    expect((await get('/api/statuses/keywords.json')).statusCode).toBe(401)
  })

  test('keywords/relation: symmetric, idempotent; the Keyword of word1; unknown 404; same word 400', async () => {
    const res = await h.call({ method: 'POST', url: '/api/keywords/relation/create.json', as: 'alice', ...form({ word1: 'haiku', word2: 'tanka' }) })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ word: 'haiku', related_keywords: ['tanka'] })
    expect((await get('/api/keywords/show/tanka.json')).json().related_keywords).toEqual(['haiku'])
    const xml = await get('/api/keywords/show/tanka.xml')
    // One element per related word (docs/api-differences.md#xml-lists).
    expect(elements(parseDocument(xml.body), 'related_keywords').map((k) => k.text)).toEqual(['haiku'])
    expect((await post('/api/keywords/relation/create.json?word1=tanka&word2=haiku', 'bob')).json().related_keywords).toEqual(['haiku'])
    expect((await post('/api/keywords/relation/destroy.json?word1=tanka&word2=haiku', 'bob')).json().related_keywords).toEqual([])
    expect((await get('/api/keywords/show/haiku.json')).json().related_keywords).toEqual([])
    expect((await post('/api/keywords/relation/destroy.json?word1=tanka&word2=haiku', 'bob')).statusCode).toBe(200)
    expect((await post('/api/keywords/relation/create.json?word1=tanka&word2=nope', 'bob')).statusCode).toBe(404)
    expect((await post('/api/keywords/relation/create.json?word1=tanka&word2=tanka', 'bob')).statusCode).toBe(400)
    expect((await post('/api/keywords/relation/create.json?word1=tanka', 'bob')).statusCode).toBe(400)
  })

  test('keywords/hot: most entries recently, user keywords left out; keywords/list by entry count with substring search and pages', async () => {
    const hot = (await get('/api/keywords/hot.json')).json().map((k: { word: string }) => k.word)
    expect(hot[0]).toBe('haiku')
    expect(hot).toContain('tanka')
    expect(hot.some((w: string) => w.startsWith('id:'))).toBe(false)
    expect((await get('/api/keywords/hot.xml')).body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><keywords type="array"><keyword>/)
    const list = (await get('/api/keywords/list.json?word=HAIKU')).json().map((k: { word: string }) => k.word)
    expect(list).toEqual(['haiku', 'Haiku Club'])
    expect((await get('/api/keywords/list.json?word=HAIKU&page=2')).json()).toEqual([])
    expect((await get('/api/keywords/list.json?page=101')).statusCode).toBe(400)
  })
})

describeEachBackend('keywords/hot between refreshes', routeBackends, (storage) => {
  let hh: Harness
  beforeAll(async () => {
    hh = await startHarness({ core: { hotRefreshSeconds: 1 } }, storage)
  })
  afterAll(async () => {
    await hh?.close()
  })
  const hotWords = async () => (await hh.call({ url: '/api/keywords/hot.json' })).json().map((k: { word: string }) => k.word)
  const postOn = async (keyword: string, times: number) => {
    for (let i = 0; i < times; i++) {
      expect((await hh.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ keyword, status: `${keyword} ${i}` }) })).statusCode).toBe(200)
    }
  }

  test('every caller gets the last ranking until it is a refresh old; then the next ranking, with the new keyword first', async () => {
    await postOn('spring', 1)
    expect(await hotWords()).toEqual(['spring'])
    await postOn('autumn', 3)
    // Within the refresh period: the ranking as it was, in both formats.
    expect(await hotWords()).toEqual(['spring'])
    expect((await hh.call({ url: '/api/keywords/hot.xml' })).body).not.toContain('autumn')
    await new Promise((r) => setTimeout(r, 1100))
    // The first caller after it may still get the last one while the new one is ranked.
    await hotWords()
    await expect.poll(hotWords, { timeout: 3000 }).toEqual(['autumn', 'spring'])
  })
})
