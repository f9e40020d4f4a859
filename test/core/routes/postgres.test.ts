// The main flows once more on PostgreSQL (production mode, SPEC §1.1): the same app over
// the other store backend.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freshPostgres } from '../../helpers/services.js'
import { form, images, multipart, parseXml, startHarness, type Harness } from '../helpers/harness.js'

const pg = await freshPostgres()

describe.skipIf(!pg)('core on PostgreSQL', () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness({}, pg!.url)
  })
  afterAll(async () => {
    await h?.close()
    await pg?.drop()
  })

  test('post, reply, star, show, destroy', async () => {
    const e = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ status: 'tea=green' }) })).json()
    expect(e).toMatchObject({ keyword: 'tea', text: 'tea=green', favorited: 0 })
    const r = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'bob', ...form({ status: 're', in_reply_to_status_id: e.id }) })).json()
    expect(r).toMatchObject({ in_reply_to_status_id: e.id, in_reply_to_user_id: 'alice' })
    expect((await h.call({ method: 'POST', url: `/api/favorites/create/${e.id}.json`, as: 'bob' })).json().favorited).toBe(1)
    expect((await h.call({ method: 'POST', url: `/api/favorites/create/${e.id}.json`, as: 'bob' })).statusCode).toBe(200)
    const xml = parseXml((await h.call({ url: `/api/statuses/show/${e.id}.xml`, as: 'bob' })).body).status as Record<string, unknown>
    expect(xml.favorited).toBe('1')
    expect((await h.call({ method: 'POST', url: `/api/statuses/destroy/${e.id}.json`, as: 'bob' })).statusCode).toBe(403)
    expect((await h.call({ method: 'POST', url: `/api/statuses/destroy/${e.id}.json`, as: 'alice' })).statusCode).toBe(200)
    expect((await h.call({ url: `/api/statuses/show/${e.id}.json` })).statusCode).toBe(404)
    expect((await h.call({ url: `/api/statuses/show/${r.id}.json` })).json().in_reply_to_status_id).toBe(e.id)
  })

  test('photos in the database, served with their ETag', async () => {
    const e = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...multipart([['file', { bytes: images.gif }], ['file', { bytes: images.png }]]) })).json()
    const urls = (e.text as string).split('\n')
    expect(urls).toHaveLength(2)
    const img = await h.call({ url: new URL(urls[1]!).pathname })
    expect(img.headers['content-type']).toBe('image/png')
    expect(img.rawPayload.equals(images.png)).toBe(true)
    expect((await h.call({ url: new URL(urls[1]!).pathname, headers: { 'if-none-match': img.headers.etag as string } })).statusCode).toBe(304)
  })

  test('bad input changes nothing', async () => {
    const kw = `pg-${Date.now()}`
    expect((await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ keyword: kw, status: 'x', in_reply_to_status_id: '424242' }) })).statusCode).toBe(400)
    expect((await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...multipart([['keyword', kw], ['file', { bytes: Buffer.from('nope') }]]) })).statusCode).toBe(415)
    expect(await h.store.keywordExists(kw)).toBe(false)
  })
})
