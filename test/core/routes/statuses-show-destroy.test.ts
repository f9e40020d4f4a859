// statuses/show and statuses/destroy through HTTP (docs/api.md#statusesshow-and-statusesdestroy).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { form, multipart, parseXml, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'
import { elements, fields, parseDocument } from '../../helpers/xml-client.js'

let h: Harness

describeEachBackend('statuses/show and destroy', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
  })
  afterAll(async () => {
    await h?.close()
  })

  async function post(as: string, params: Record<string, string>) {
    const res = await h.call({ method: 'POST', url: '/api/statuses/update.json', as, ...form(params) })
    expect(res.statusCode).toBe(200)
    return res.json()
  }
  const show = (id: string, ext = 'json', as?: string) => h.call({ url: `/api/statuses/show/${id}.${ext}`, ...(as ? { as } : {}) })
  const destroy = (id: string, as?: string, params: Record<string, string> = {}, ext = 'json') =>
    h.call({ method: 'POST', url: `/api/statuses/destroy/${id}.${ext}`, ...(as ? { as } : {}), ...form(params) })

  describe('statuses/show', () => {
    test('anonymous: the Entry with favorited 0, in JSON and XML', async () => {
      const e = await post('alice', { status: 'tea=green' })
      const json = await show(e.id)
      expect(json.statusCode).toBe(200)
      expect(json.json()).toEqual({ ...e, replies: [] })
      const xml = await show(e.id, 'xml')
      expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8')
      expect(parseXml(xml.body).status).toMatchObject({ id: e.id, favorited: '0', keyword: 'tea', text: 'tea=green', user: { id: 'alice' } })
    })

    test('with its replies, oldest first, each with the viewer\'s star; the entry\'s own fields as without them', async () => {
      const e = await post('alice', { status: 'thread=root' })
      const r1 = await post('bob', { status: 'first', in_reply_to_status_id: e.id })
      const r2 = await post('alice', { status: 'second', in_reply_to_status_id: e.id })
      expect((await h.call({ method: 'POST', url: `/api/favorites/create/${r2.id}.json`, as: 'bob' })).statusCode).toBe(200)
      const asBob = (await h.call({ url: `/api/statuses/show/${e.id}.json`, as: 'bob' })).json()
      expect(asBob.replies.map((r: { id: string }) => r.id)).toEqual([r1.id, r2.id])
      expect(asBob.replies.map((r: { favorited: number }) => r.favorited)).toEqual([0, 1])
      expect(asBob).toMatchObject({ id: e.id, favorited: 0, text: 'thread=root' })
      const xml = parseDocument((await show(e.id, 'xml')).body)
      expect(elements(xml, 'replies').map((r) => fields(r).text)).toEqual(['first', 'second'])
      expect((await show(r1.id)).json().replies).toEqual([])
    })

    test('at most 100 replies, the oldest ones, as on the timelines', async () => {
      const e = await post('alice', { status: 'busy=root' })
      const replies: string[] = []
      for (let i = 0; i < 101; i++) replies.push((await post('bob', { status: `reply ${i}`, in_reply_to_status_id: e.id })).id)
      const shown = (await show(e.id)).json().replies.map((r: { id: string }) => r.id)
      expect(shown).toEqual(replies.slice(0, 100))
    }, 60_000)

    test('no extension is JSON; leading zeros name the same entry', async () => {
      const e = await post('alice', { status: 'plain' })
      expect((await h.call({ url: `/api/statuses/show/${e.id}` })).json().id).toBe(e.id)
      expect((await h.call({ url: `/api/statuses/show/000${e.id}.json` })).json().id).toBe(e.id)
    })

    test('unknown, non-digit and out-of-range IDs: 404 entry_not_found in format', async () => {
      for (const id of ['999999999', 'abc', '12a', '-3', '0', '99999999999999999999']) {
        const res = await show(id)
        expect(res.statusCode, id).toBe(404)
        expect(res.json()).toEqual({ error: { status: 404, code: 'entry_not_found', message: expect.any(String) } })
      }
      const xml = await show('abc', 'xml')
      expect(xml.statusCode).toBe(404)
      expect(parseXml(xml.body).error).toMatchObject({ status: '404', code: 'entry_not_found' })
    })

    test('body_formats on show', async () => {
      const e = await post('alice', { status: 'see [keyword:季語]' })
      const res = (await h.call({ url: `/api/statuses/show/${e.id}.json?body_formats=html_touch` })).json()
      expect(res.html_touch).toBe('see <a href="http://kigo.example:8080/keyword/%E5%AD%A3%E8%AA%9E">季語</a>')
      expect(res.html).toBeUndefined()
      // Unknown values are ignored; known ones beside them still add their fields.
      const lenient = await h.call({ url: `/api/statuses/show/${e.id}.json?body_formats=xhtml,api` })
      expect(lenient.statusCode).toBe(200)
      expect(lenient.json()).not.toHaveProperty('html')
      expect((await h.call({ url: `/api/statuses/show/${e.id}.json?body_formats=api,haiku` })).json().haiku_text).toBe('see [keyword:季語]')
    })

    test('HEAD answers like GET without a body', async () => {
      const e = await post('alice', { status: 'head' })
      const res = await h.call({ method: 'HEAD', url: `/api/statuses/show/${e.id}.json` })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(res.body).toBe('')
    })
  })

  describe('statuses/destroy', () => {
    test('the author deletes: the deleted Entry comes back, then show is 404', async () => {
      const e = await post('alice', { status: 'to delete' })
      const res = await destroy(e.id, 'alice')
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual(e)
      expect((await show(e.id)).statusCode).toBe(404)
      expect((await destroy(e.id, 'alice')).statusCode).toBe(404)
    })

    test('XML result', async () => {
      const e = await post('alice', { status: 'xml delete' })
      const res = await destroy(e.id, 'alice', {}, 'xml')
      expect(res.statusCode).toBe(200)
      expect(parseXml(res.body).status).toMatchObject({ id: e.id, text: 'xml delete' })
    })

    test('the owner of the user keyword id:X may delete what others posted there', async () => {
      const e = await post('alice', { keyword: 'id:bob', status: 'on your wall' })
      expect((await destroy(e.id, 'carol')).statusCode).toBe(403)
      const res = await destroy(e.id, 'bob')
      expect(res.statusCode).toBe(200)
      expect(res.json().text).toBe('id:bob=on your wall')
    })

    test('anyone else: 403 not_allowed in format, and the entry stays', async () => {
      const e = await post('alice', { status: 'mine' })
      const res = await destroy(e.id, 'bob')
      expect(res.statusCode).toBe(403)
      expect(res.json()).toEqual({ error: { status: 403, code: 'not_allowed', message: expect.any(String) } })
      const xml = await destroy(e.id, 'bob', {}, 'xml')
      expect(parseXml(xml.body).error).toMatchObject({ status: '403', code: 'not_allowed' })
      expect((await show(e.id)).statusCode).toBe(200)
    })

    test('author_url_name: another name is 404 (entry stays), the right one deletes', async () => {
      const e = await post('alice', { status: 'named' })
      const wrong = await destroy(e.id, 'alice', { author_url_name: 'bob' })
      expect(wrong.statusCode).toBe(404)
      expect(wrong.json().error.code).toBe('entry_not_found')
      expect((await show(e.id)).statusCode).toBe(200)
      expect((await destroy(e.id, 'alice', { author_url_name: 'alice' })).statusCode).toBe(200)
    })

    test('its stars go with it; replies keep their in_reply_to_status_id', async () => {
      const target = await post('alice', { status: 'target' })
      const reply = await post('bob', { status: 'reply', in_reply_to_status_id: target.id })
      expect((await h.call({ method: 'POST', url: `/api/favorites/create/${target.id}.json`, as: 'bob' })).statusCode).toBe(200)
      const deleted = await destroy(target.id, 'alice')
      expect(deleted.json().favorited).toBe(0)
      expect(await h.store.hasStar(target.id, 'bob')).toBe(false)
      expect((await h.call({ method: 'POST', url: `/api/favorites/create/${target.id}.json`, as: 'bob' })).statusCode).toBe(404)
      expect((await show(reply.id)).json()).toMatchObject({ in_reply_to_status_id: target.id, in_reply_to_user_id: 'alice' })
    })

    test('anonymous: 401; unknown entry: 404; a bad parameter: 400 and nothing deleted', async () => {
      const e = await post('alice', { status: 'stays' })
      expect((await destroy(e.id)).statusCode).toBe(401)
      expect((await destroy('999999999', 'alice')).statusCode).toBe(404)
      expect((await destroy(e.id, 'alice', { callback: 'x y' })).statusCode).toBe(400)
      const dup = await h.call({ method: 'POST', url: `/api/statuses/destroy/${e.id}.json?author_url_name=alice`, as: 'alice', ...form({ author_url_name: 'alice' }) })
      expect(dup.statusCode).toBe(400)
      expect((await show(e.id)).statusCode).toBe(200)
    })
  })

  describe('methods', () => {
    test('a wrong method: 405 with Allow, in format', async () => {
      const e = await post('alice', { status: 'x' })
      const getDestroy = await h.call({ url: `/api/statuses/destroy/${e.id}.xml`, as: 'alice' })
      expect(getDestroy.statusCode).toBe(405)
      expect(getDestroy.headers.allow).toBe('POST')
      expect(parseXml(getDestroy.body).error).toMatchObject({ status: '405', code: 'method_not_allowed' })
      const putShow = await h.call({ method: 'PUT', url: `/api/statuses/show/${e.id}.json` })
      expect(putShow.statusCode).toBe(405)
      expect(putShow.headers.allow).toBe('GET, HEAD, POST')
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        const res = await h.call({ method, url: '/api/statuses/update.json', as: 'alice' })
        expect(res.statusCode, method).toBe(405)
        expect(res.headers.allow).toBe('POST')
      }
      expect((await show(e.id)).statusCode).toBe(200)
    })

    test('a multipart body where no operation reads one: still 405 or 404, and the write route still reads it', async () => {
      // Multipart bodies are parsed only in the scope of the operations that take a body.
      const e = await post('alice', { status: 'x' })
      const body = multipart([['status', 'from a multipart body']])
      // A read by POST reads its parameters from it, and ignores the ones it does not take.
      const postShow = await h.call({ method: 'POST', url: `/api/statuses/show/${e.id}.json`, as: 'alice', ...body })
      expect(postShow.statusCode).toBe(200)
      expect(postShow.json()).toMatchObject({ id: e.id, text: 'x' })
      const putUpdate = await h.call({ method: 'PUT', url: '/api/statuses/update.json', as: 'alice', ...body })
      expect(putUpdate.statusCode).toBe(405)
      expect(putUpdate.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
      const unknown = await h.call({ method: 'POST', url: '/api/statuses/nothing.json', as: 'alice', ...body })
      expect(unknown.statusCode).toBe(404)
      const written = await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...body })
      expect(written.statusCode).toBe(200)
      expect(written.json()).toMatchObject({ text: 'from a multipart body' })
      expect((await show(e.id)).json()).toEqual({ ...e, replies: [] })
    })

    test('OPTIONS lists the methods', async () => {
      const res = await h.call({ method: 'OPTIONS', url: '/api/statuses/update.json' })
      expect(res.statusCode).toBe(204)
      expect(res.headers.allow).toBe('POST, OPTIONS')
    })
  })
})
