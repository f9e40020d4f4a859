// favorites/create and favorites/destroy through HTTP (docs/api.md#favoritescreate-and-favoritesdestroy).
import { afterAll, beforeAll, expect, test } from 'vitest'
import { form, parseXml, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'

let h: Harness
let entry: { id: string }

describeEachBackend('favorites routes', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
    entry = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ status: 'star me' }) })).json()
  })
  afterAll(async () => {
    await h?.close()
  })

  const fav = (op: 'create' | 'destroy', id: string, as?: string, ext = 'json') =>
    h.call({ method: 'POST', url: `/api/favorites/${op}/${id}.${ext}`, ...(as ? { as } : {}) })
  const favorited = async (as?: string) => (await h.call({ url: `/api/statuses/show/${entry.id}.json`, ...(as ? { as } : {}) })).json().favorited

  test('create: the Entry with favorited 1; a repeat succeeds and changes nothing', async () => {
    const first = await fav('create', entry.id, 'bob')
    expect(first.statusCode).toBe(200)
    expect(first.json()).toMatchObject({ id: entry.id, favorited: 1, text: 'star me' })
    const again = await fav('create', entry.id, 'bob')
    expect(again.statusCode).toBe(200)
    expect(again.json().favorited).toBe(1)
    expect(await h.store.hasStar(entry.id, 'bob')).toBe(true)
  })

  test('favorited is relative to the requester: 1 for the starrer, 0 for others and for anonymous requests', async () => {
    await fav('create', entry.id, 'bob')
    expect(await favorited('bob')).toBe(1)
    expect(await favorited('carol')).toBe(0)
    expect(await favorited()).toBe(0)
  })

  test('destroy: favorited 0; removing an absent star succeeds', async () => {
    await fav('create', entry.id, 'dave')
    const res = await fav('destroy', entry.id, 'dave')
    expect(res.statusCode).toBe(200)
    expect(res.json().favorited).toBe(0)
    expect(await favorited('dave')).toBe(0)
    const again = await fav('destroy', entry.id, 'dave')
    expect(again.statusCode).toBe(200)
    expect(again.json().favorited).toBe(0)
  })

  test('XML results', async () => {
    const c = await fav('create', entry.id, 'erin', 'xml')
    expect(c.headers['content-type']).toBe('application/xml; charset=utf-8')
    expect(parseXml(c.body).status).toMatchObject({ id: entry.id, favorited: '1' })
    const d = await fav('destroy', entry.id, 'erin', 'xml')
    expect(parseXml(d.body).status).toMatchObject({ id: entry.id, favorited: '0' })
  })

  test('an unknown entry: 404 for both, in format', async () => {
    for (const op of ['create', 'destroy'] as const) {
      const res = await fav(op, '987654321', 'bob')
      expect(res.statusCode).toBe(404)
      expect(res.json().error.code).toBe('entry_not_found')
      const xml = await fav(op, 'x1', 'bob', 'xml')
      expect(xml.statusCode).toBe(404)
      expect(parseXml(xml.body).error).toMatchObject({ status: '404', code: 'entry_not_found' })
    }
  })

  test('anonymous: 401 and no star', async () => {
    const res = await fav('create', entry.id)
    expect(res.statusCode).toBe(401)
    expect(res.json().error.code).toBe('authentication_required')
    const bad = await h.call({ method: 'POST', url: `/api/favorites/create/${entry.id}.json?callback=x%20y`, as: 'frank' })
    expect(bad.statusCode).toBe(400)
    expect(await h.store.hasStar(entry.id, 'frank')).toBe(false)
  })
})
