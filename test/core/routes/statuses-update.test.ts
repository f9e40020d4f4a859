// statuses/update through HTTP (docs/api.md#statusesupdate): every rule, in JSON and XML, and every kind of
// bad input getting its 4xx and changing nothing.
import { pngHeader } from '../../helpers/image-headers.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import Value from 'typebox/value'
import { EntryJson } from '../../../src/core/render/schemas.js'
import { form, images, multipart, parseXml, routeBackends, startHarness, type Harness, type Part } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'

let h: Harness
let small: Harness

describeEachBackend('statuses/update', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
    small = await startHarness({ core: { limits: { bodyChars: 20, keywordChars: 8, sourceChars: 4, fileBytes: 256 } } }, storage)
  })
  afterAll(async () => {
    await h?.close()
    await small?.close()
  })

  const update = (params: Record<string, string>, opts: { as?: string; url?: string; host?: string; harness?: Harness } = {}) =>
    (opts.harness ?? h).call({ method: 'POST', url: opts.url ?? '/api/statuses/update.json', as: opts.as ?? 'alice', ...(opts.host ? { host: opts.host } : {}), ...form(params) })

  const upload = (parts: Part[], opts: { as?: string; url?: string; harness?: Harness } = {}) =>
    (opts.harness ?? h).call({ method: 'POST', url: opts.url ?? '/api/statuses/update.json', as: opts.as ?? 'alice', ...multipart(parts) })

  let unique = 0
  const fresh = (prefix = 'kw') => `${prefix}-${++unique}-${Date.now()}`

  /**
   * Nothing was stored: the keyword the request named does not exist, and the next entry
   * gets the ID right after the last one (failed requests consume no ID).
   */
  async function expectNothingCreated(keyword: string, harness = h): Promise<void> {
    expect(await harness.store.keywordExists(keyword)).toBe(false)
    const before = await update({ status: 'probe' }, { harness })
    const after = await update({ status: 'probe' }, { harness })
    expect(BigInt(after.json().id)).toBe(BigInt(before.json().id) + 1n)
  }

  function expectError(res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): unknown }, status: number, code: string) {
    expect(res.statusCode).toBe(status)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.json()).toEqual({ error: { status, code, message: expect.any(String) } })
  }

  describe('a post', () => {
    test('JSON: the new Entry, keyword from status, favorited 0, stored', async () => {
      const res = await update({ status: 'spring rain=falls softly' })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      const e = res.json()
      expect(Value.Check(EntryJson, e)).toBe(true)
      expect(e).toMatchObject({
        favorited: 0,
        in_reply_to_status_id: 0,
        in_reply_to_user_id: 0,
        keyword: 'spring rain',
        source: 'API',
        text: 'spring rain=falls softly',
        target: { title: 'spring rain', word: 'spring rain' },
        link: `http://kigo.example:8080/alice/${e.id}`,
        user: { id: 'alice', name: 'alice name', screen_name: 'alice', url: 'http://kigo.example:8080/alice/', profile_image_url: 'http://kigo.example:8080/users/alice/profile.png' },
      })
      expect(Date.now() - Date.parse(e.created_at)).toBeLessThan(60_000)
      expect(await h.store.keywordExists('spring rain')).toBe(true)
      const shown = await h.call({ url: `/api/statuses/show/${e.id}.json` })
      expect(shown.json()).toEqual({ ...e, replies: [] })
    })

    test('XML: a status document with the same fields', async () => {
      const res = await update({ status: 'hello', keyword: 'greetings' }, { url: '/api/statuses/update.xml' })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8')
      expect(res.body.startsWith('<?xml version="1.0" encoding="UTF-8"?><status>')).toBe(true)
      const s = parseXml(res.body).status as Record<string, unknown>
      expect(s).toMatchObject({ favorited: '0', in_reply_to_status_id: '', in_reply_to_user_id: '', keyword: 'greetings', text: 'greetings=hello', source: 'API' })
      expect(s.user).toMatchObject({ id: 'alice', screen_name: 'alice', followers_count: '0' })
    })

    test('the path without extension answers JSON', async () => {
      const res = await update({ status: 'no extension' }, { url: '/api/statuses/update' })
      expect(res.statusCode).toBe(200)
      expect(res.json().text).toBe('no extension')
    })

    test("no keyword: the poster's user keyword, and text is the body alone", async () => {
      const e = (await update({ status: '  plain words  ' })).json()
      expect(e.keyword).toBe('id:alice')
      expect(e.text).toBe('  plain words  ')
    })

    test('an explicit keyword keeps the status whole; posting on another user keyword shows the prefix', async () => {
      expect((await update({ keyword: ' tea ', status: 'a=b' })).json()).toMatchObject({ keyword: 'tea', text: 'tea=a=b' })
      expect((await update({ keyword: 'id:bob', status: 'hi bob' })).json()).toMatchObject({ keyword: 'id:bob', text: 'id:bob=hi bob' })
    })

    test('the entry belongs to the deployment it was posted to', async () => {
      const e = (await update({ status: 'global post' }, { host: 'GLOBAL.kigo.example' })).json()
      expect(e.link).toBe(`http://global.kigo.example/alice/${e.id}`)
      expect(e.user.url).toBe('http://global.kigo.example/alice/')
      // Shown from the domestic host, the links stay global; the icon follows the request.
      const shown = (await h.call({ url: `/api/statuses/show/${e.id}.json` })).json()
      expect(shown.link).toBe(e.link)
      expect(shown.user.profile_image_url).toBe('http://kigo.example:8080/users/alice/profile.png')
    })

    test('source names the client and becomes a keyword', async () => {
      const source = fresh('client')
      const e = (await update({ status: 'from a client', source: `  ${source} ` })).json()
      expect(e.source).toBe(source)
      expect(await h.store.keywordExists(source)).toBe(true)
    })

    test('parameters may come in the query string', async () => {
      const res = await h.call({ method: 'POST', url: '/api/statuses/update.json?status=%E5%AD%A3%E8%AA%9E%3D%E6%98%A5&source=q', as: 'alice' })
      expect(res.json()).toMatchObject({ keyword: '季語', text: '季語=春', source: 'q' })
    })

    test('multipart text fields work too', async () => {
      const res = await upload([['status', 'multi=part body'], ['source', 'mp']])
      expect(res.json()).toMatchObject({ keyword: 'multi', text: 'multi=part body', source: 'mp' })
    })

    test('a leading @id is plain text', async () => {
      expect((await update({ status: '@bob hello' })).json()).toMatchObject({ keyword: 'id:alice', text: '@bob hello', in_reply_to_status_id: 0 })
    })

    test('the display name follows the identity', async () => {
      const e = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: { user: 'dora', userName: 'Dora 🌸' }, ...form({ status: 'hi' }) })).json()
      expect(e.user.name).toBe('Dora 🌸')
      // A later request with a new name (any operation) updates the public copy.
      await h.call({ method: 'POST', url: `/api/favorites/create/${e.id}.json`, as: { user: 'dora', userName: 'Dora Renamed' } })
      expect((await h.call({ url: `/api/statuses/show/${e.id}.json` })).json().user.name).toBe('Dora Renamed')
    })
  })

  describe('replies (rule 5)', () => {
    test('the reply records the target and its author, in JSON and XML', async () => {
      const target = (await update({ status: 'target' }, { as: 'bob' })).json()
      const reply = (await update({ status: 'a reply', in_reply_to_status_id: target.id })).json()
      expect(reply).toMatchObject({ in_reply_to_status_id: target.id, in_reply_to_user_id: 'bob' })
      const xml = parseXml((await h.call({ url: `/api/statuses/show/${reply.id}.xml` })).body).status as Record<string, unknown>
      expect(xml).toMatchObject({ in_reply_to_status_id: target.id, in_reply_to_user_id: 'bob' })
    })

    test('an unknown, deleted or malformed target is 400 and nothing is stored', async () => {
      const gone = (await update({ status: 'soon gone' })).json()
      await h.call({ method: 'POST', url: `/api/statuses/destroy/${gone.id}.json`, as: 'alice' })
      for (const [id, code] of [['999999999', 'reply_target_not_found'], [gone.id, 'reply_target_not_found'], ['99999999999999999999999', 'reply_target_not_found'], ['12x', 'invalid_parameter'], ['-1', 'invalid_parameter']] as const) {
        const kw = fresh()
        expectError(await update({ keyword: kw, status: 'x', in_reply_to_status_id: id }), 400, code)
        await expectNothingCreated(kw)
      }
    })
  })

  describe('files (rule 6)', () => {
    test("each image is stored as a photo and its image_url appended, one per line, in order", async () => {
      const source = fresh('cam')
      const res = await upload([['file', { bytes: images.png, filename: 'a.jpg', type: 'image/jpeg' }], ['file', { bytes: images.jpg }], ['file', { bytes: images.gif }], ['file', { bytes: images.webp }], ['keyword', 'photos'], ['source', source]])
      expect(res.statusCode).toBe(200)
      const e = res.json()
      expect(e.keyword).toBe('photos')
      const lines = (e.text as string).replace(/^photos=/, '').split('\n')
      expect(lines).toHaveLength(4)
      const types = ['image/png', 'image/jpeg', 'image/gif', 'image/webp']
      const bytes = [images.png, images.jpg, images.gif, images.webp]
      for (const [i, line] of lines.entries()) {
        expect(line).toMatch(new RegExp(`^http://kigo\\.example:8080/photos/alice/[0-9]+\\.(png|jpg|gif|webp)$`))
        const img = await h.call({ url: new URL(line).pathname })
        expect(img.statusCode).toBe(200)
        expect(img.headers['content-type']).toBe(types[i])
        expect(img.rawPayload.equals(bytes[i]!)).toBe(true)
      }
      // The photos carry the client name (seen through the photo page's data: the store).
      const id = /\/([0-9]+)\.png$/.exec(lines[0]!)![1]!
      expect((await h.store.getPhoto('alice', id))?.source).toBe(source)
      const html = (await h.call({ url: `/api/statuses/show/${e.id}.json?body_formats=html_mobile,html` })).json()
      expect(html.html).toContain(`<img src="${lines[0]}"`)
      expect(html.html_mobile).not.toContain('<img')
    })

    test('one file and no keyword: the user keyword, the body is the URL', async () => {
      const e = (await upload([['file', { bytes: images.jpg }]])).json()
      expect(e.keyword).toBe('id:alice')
      expect(e.text).toMatch(/^http:\/\/kigo\.example:8080\/photos\/alice\/[0-9]+\.jpg$/)
    })

    test('5 files: 400; not an image: 415; too large: 413; file and status: 400; wrong part names: 400; nothing stored', async () => {
      const cases: Array<[Part[], number, string, Harness?]> = [
        [Array.from({ length: 5 }, () => ['file', { bytes: images.png }] as Part), 400, 'too_many_files'],
        [[['file', { bytes: images.png }], ['file', { bytes: Buffer.from('<html>not an image</html>'), filename: 'x.png', type: 'image/png' }]], 415, 'not_an_image'],
        [[['file', { bytes: Buffer.alloc(0) }]], 415, 'not_an_image'],
        [[['file', { bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) }]], 415, 'not_an_image'],
        [[['file', { bytes: pngHeader(16_385, 16_385) }]], 415, 'not_an_image'],
        [[['file', { bytes: Buffer.concat([images.png, Buffer.alloc(300)]) }]], 413, 'file_too_large', small],
        [[['file', { bytes: images.png }], ['status', 'both']], 400, 'status_and_file'],
        [[['photo', { bytes: images.png }]], 400, 'invalid_parameter'],
        [[['status', { bytes: Buffer.from('text as a file') }]], 400, 'invalid_parameter'],
        [[['file', 'a text field named file']], 400, 'invalid_parameter'],
      ]
      for (const [parts, status, code, harness] of cases) {
        const kw = fresh()
        const res = await upload([...parts, ['keyword', kw]], { harness: harness ?? h })
        expectError(res, status, code)
        await expectNothingCreated(kw, harness ?? h)
      }
    })

    test('a photo over the limit: 413 saying the limit as people read it (10 MiB), not in bytes', async () => {
      const res = await upload([['file', { bytes: Buffer.concat([images.png, Buffer.alloc(10 * 1024 * 1024)]) }], ['keyword', fresh()]])
      expectError(res, 413, 'file_too_large')
      expect(res.json().error.message).toBe('each file must be at most 10 MiB')
    })

    test('file given in the query string or urlencoded body is 400', async () => {
      expectError(await update({ file: 'x' }), 400, 'invalid_parameter')
      expectError(await h.call({ method: 'POST', url: '/api/statuses/update.json?file=x', as: 'alice' }), 400, 'invalid_parameter')
    })
  })

  describe('bad parameters get 400 in format and change nothing', () => {
    test('neither status nor file, or only white space, or nothing after the keyword', async () => {
      for (const params of [{}, { status: '' }, { status: ' \n\t ' }] as Array<Record<string, string>>) {
        const kw = fresh()
        expectError(await update({ ...params, keyword: kw }), 400, 'status_required')
        await expectNothingCreated(kw)
      }
      for (const suffix of ['=', '=  \n']) {
        const kw = fresh()
        expectError(await update({ status: `${kw}${suffix}` }), 400, 'status_required')
        await expectNothingCreated(kw)
      }
      expectError(await upload([]), 400, 'status_required')
    })

    test('the same parameter twice: in one place or in two', async () => {
      const kw = fresh()
      const twiceInBody = await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload: `keyword=${kw}&status=a&status=b`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      expectError(twiceInBody, 400, 'duplicate_parameter')
      expectError(await h.call({ method: 'POST', url: `/api/statuses/update.json?status=a`, as: 'alice', ...form({ status: 'b', keyword: kw }) }), 400, 'duplicate_parameter')
      expectError(await h.call({ method: 'POST', url: `/api/statuses/update.json?keyword=${kw}&keyword=${kw}&status=a`, as: 'alice' }), 400, 'duplicate_parameter')
      expectError(await upload([['keyword', kw], ['status', 'a'], ['status', 'b']]), 400, 'duplicate_parameter')
      // The query's callback is known early, so even this error is wrapped in it.
      const twoCallbacks = await h.call({ method: 'POST', url: `/api/statuses/update.json?callback=f`, as: 'alice', ...form({ status: 'b', keyword: kw, callback: 'g' }) })
      expect(twoCallbacks.statusCode).toBe(400)
      expect(JSON.parse(/^f\((.*)\);$/s.exec(twoCallbacks.body)![1]!)).toMatchObject({ error: { code: 'duplicate_parameter' } })
      await expectNothingCreated(kw)
    })

    test('over the limits: 400 naming the parameter (the limits are configurable)', async () => {
      const kw = fresh()
      expect((await update({ keyword: kw, status: '季'.repeat(10_000) })).statusCode).toBe(200)
      const cases: Array<[Record<string, string>, string]> = [
        [{ status: 'x'.repeat(10_001) }, 'status_too_long'],
        [{ status: '😀'.repeat(10_001) }, 'status_too_long'],
        [{ keyword: 'k'.repeat(256), status: 'x' }, 'keyword_too_long'],
        [{ status: `${'k'.repeat(256)}=x` }, 'keyword_too_long'],
        [{ source: 's'.repeat(65), status: 'x' }, 'source_too_long'],
        [{ keyword: 'a\u0007b', status: 'x' }, 'invalid_keyword'],
        [{ keyword: 'a\rb', status: 'x' }, 'invalid_keyword'],
        [{ source: 'a\u001bb', status: 'x' }, 'invalid_source'],
      ]
      for (const [params, code] of cases) {
        const res = await update(params)
        expectError(res, 400, code)
        expect(res.json().error.message).toMatch(/^(status|keyword|source) /)
      }
      // Configured lower limits apply.
      expectError(await update({ status: 'x'.repeat(21) }, { harness: small }), 400, 'status_too_long')
      expectError(await update({ keyword: 'k'.repeat(9), status: 'x' }, { harness: small }), 400, 'keyword_too_long')
      expectError(await update({ source: 'sssss', status: 'x' }, { harness: small }), 400, 'source_too_long')
      expect((await update({ keyword: 'k'.repeat(8), source: 'ssss', status: 'x'.repeat(20) }, { harness: small })).statusCode).toBe(200)
      await expectNothingCreated('k'.repeat(256))
    })

    test('oversized bodies and fields: 413, nothing stored', async () => {
      const kw = fresh()
      const big = 'x'.repeat(1024 * 1024 + 10)
      expectError(await update({ keyword: kw, status: big }), 413, 'body_too_large')
      expectError(await upload([['keyword', kw], ['status', big]]), 413, 'parameter_too_large')
      expectError(await upload([['keyword', kw], ['status', 'x'], ...Array.from({ length: 120 }, (_, i) => [`f${i}`, 'v'] as Part)]), 413, 'too_many_parts')
      await expectNothingCreated(kw)
    })

    test('newline and tab are allowed in keyword and source', async () => {
      expect((await update({ keyword: 'two\nlines\tx', source: 'a\tb', status: 'x' })).json()).toMatchObject({ keyword: 'two\nlines\tx', source: 'a\tb' })
    })

    test('U+0000 anywhere is 400', async () => {
      const kw = fresh()
      for (const params of [{ keyword: kw, status: 'a\u0000b' }, { keyword: `${kw}\u0000`, status: 'x' }, { keyword: kw, status: 'x', source: '\u0000' }, { keyword: kw, status: 'x', anything: '\u0000' }] as Array<Record<string, string>>) {
        expectError(await update(params), 400, 'invalid_parameter')
      }
      expectError(await upload([['keyword', kw], ['status', 'a\u0000b']]), 400, 'invalid_parameter')
      await expectNothingCreated(kw)
    })

    test('invalid UTF-8 and bad percent-encoding: 400', async () => {
      const kw = fresh()
      const raw = (payload: Buffer | string, url = '/api/statuses/update.json') =>
        h.call({ method: 'POST', url, as: 'alice', payload, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      expectError(await raw(`keyword=${kw}&status=%FF%FE`), 400, 'bad_encoding')
      expectError(await raw(Buffer.concat([Buffer.from(`keyword=${kw}&status=`), Buffer.from([0xc3, 0x28])])), 400, 'bad_encoding')
      expectError(await raw(`keyword=${kw}&status=100%`), 400, 'bad_encoding')
      expectError(await raw(`keyword=${kw}&status=%zz`), 400, 'bad_encoding')
      expectError(await raw('', `/api/statuses/update.json?keyword=${kw}&status=%C0%AF`), 400, 'bad_encoding')
      expectError(await raw('', `/api/statuses/update.json?keyword=${kw}&status=%E3%81`), 400, 'bad_encoding')
      // A multipart text part that is not UTF-8.
      const mp = multipart([['keyword', kw], ['status', 'PLACEHOLDER']])
      const payload = Buffer.from(mp.payload.toString('latin1').replace('PLACEHOLDER', '\xff\xfe'), 'latin1')
      expectError(await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload, headers: mp.headers }), 400, 'bad_encoding')
      // A declared non-UTF-8 charset for the form.
      const sjis = await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload: `keyword=${kw}&status=x`, headers: { 'content-type': 'application/x-www-form-urlencoded; charset=Shift_JIS' } })
      expectError(sjis, 415, 'unsupported_charset')
      await expectNothingCreated(kw)
    })

    test('wrong types: a JSON body is 415, a JSON multipart field is 400, a malformed multipart body is 400', async () => {
      const kw = fresh()
      expectError(await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload: JSON.stringify({ keyword: kw, status: 'x' }), headers: { 'content-type': 'application/json' } }), 415, 'unsupported_media_type')
      const boundary = 'xyz'
      const jsonField = `--${boundary}\r\nContent-Disposition: form-data; name="status"\r\nContent-Type: application/json\r\n\r\n{"a":1}\r\n--${boundary}\r\nContent-Disposition: form-data; name="keyword"\r\n\r\n${kw}\r\n--${boundary}--\r\n`
      expectError(await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload: jsonField, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }), 400, 'invalid_parameter')
      const noBoundary = await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload: 'garbage', headers: { 'content-type': 'multipart/form-data' } })
      expect(noBoundary.statusCode).toBe(400)
      const truncated = `--${boundary}\r\nContent-Disposition: form-data; name="keyword"\r\n\r\n${kw}\r\n--${boundary}\r\nContent-Disposition: form-data; name="status"\r\n\r\nunfinished`
      const res = await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', payload: truncated, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })
      expect(res.statusCode).toBe(400)
      await expectNothingCreated(kw)
    })

    test('an unknown body_formats value is ignored; the known ones still add their fields', async () => {
      const res = await update({ keyword: fresh(), status: 'x', body_formats: 'api,html,bbcode' })
      expect(res.statusCode).toBe(200)
      expect(res.json().html).toBe('x')
      expect(res.json()).not.toHaveProperty('bbcode')
    })

    test('errors of an .xml path are XML', async () => {
      const res = await update({ status: '' }, { url: '/api/statuses/update.xml' })
      expect(res.statusCode).toBe(400)
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8')
      expect(parseXml(res.body).error).toEqual({ status: '400', code: 'status_required', message: expect.any(String) })
    })
  })

  describe('who may post', () => {
    test('anonymous: 401 in format, no challenge at the core, nothing stored', async () => {
      const kw = fresh()
      const json = await h.call({ method: 'POST', url: '/api/statuses/update.json', ...form({ keyword: kw, status: 'x' }) })
      expectError(json, 401, 'authentication_required')
      expect(json.headers['www-authenticate']).toBeUndefined()
      const xml = await h.call({ method: 'POST', url: '/api/statuses/update.xml', ...form({ keyword: kw, status: 'x' }) })
      expect(xml.statusCode).toBe(401)
      expect(parseXml(xml.body).error).toMatchObject({ status: '401', code: 'authentication_required' })
      await expectNothingCreated(kw)
    })

    test('an unknown host: 400 unknown_deployment, nothing stored', async () => {
      const kw = fresh()
      for (const host of ['evil.example', 'kigo.example', 'kigo.example:8081', '127.0.0.1:8081']) {
        expectError(await update({ keyword: kw, status: 'x' }, { host }), 400, 'unknown_deployment')
      }
      await expectNothingCreated(kw)
    })
  })

  describe('callback and body_formats (docs/api.md#callback-and-body_formats)', () => {
    test('JSONP wraps success and errors, keeping the status', async () => {
      const ok = await update({ status: 'jsonp', callback: 'my.cb_1' })
      expect(ok.statusCode).toBe(200)
      expect(ok.headers['content-type']).toBe('application/javascript; charset=utf-8')
      expect(ok.headers['x-content-type-options']).toBe('nosniff')
      const m = /^my\.cb_1\((.*)\);$/s.exec(ok.body)
      expect(JSON.parse(m![1]!)).toMatchObject({ text: 'jsonp' })
      const err = await h.call({ method: 'POST', url: '/api/statuses/update.json?callback=cb', as: 'alice', ...form({ status: '' }) })
      expect(err.statusCode).toBe(400)
      expect(err.headers['content-type']).toBe('application/javascript; charset=utf-8')
      expect(JSON.parse(/^cb\((.*)\);$/s.exec(err.body)![1]!)).toMatchObject({ error: { status: 400, code: 'status_required' } })
      const unauth = await h.call({ method: 'POST', url: '/api/statuses/update.json?callback=cb' })
      expect(unauth.statusCode).toBe(401)
      expect(unauth.body.startsWith('cb(')).toBe(true)
    })

    test('an invalid callback is 400 in plain JSON and stores nothing; for XML it is ignored', async () => {
      const kw = fresh()
      for (const cb of ['alert(1)', '1abc', 'a..b', 'a-b', `a${'b'.repeat(128)}`, '</script>']) {
        expectError(await update({ keyword: kw, status: 'x', callback: cb }), 400, 'invalid_callback')
      }
      await expectNothingCreated(kw)
      const xml = await update({ status: 'xml ignores callback', callback: 'alert(1)' }, { url: '/api/statuses/update.xml' })
      expect(xml.statusCode).toBe(200)
      expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8')
    })

    test('body_formats adds the fields, rendering the body without the keyword prefix', async () => {
      const e = (await update({ status: 'tea=<b>id:bob</b>\n[[matcha]] http://a.example/', body_formats: 'haiku,html,html_touch,html_mobile' })).json()
      expect(e.haiku_text).toBe('<b>id:bob</b>\n[[matcha]] http://a.example/')
      expect(e.html).toBe(
        '&lt;b&gt;<a href="http://kigo.example:8080/bob/">id:bob</a>&lt;/b&gt;<br><a href="http://kigo.example:8080/keyword/matcha">matcha</a> <a href="http://a.example/" rel="nofollow">http://a.example/</a>',
      )
      expect(e.html_touch).toBe(e.html)
      expect(e.html_mobile).toBe(e.html)
      const xml = parseXml((await update({ status: 'x', body_formats: 'haiku' }, { url: '/api/statuses/update.xml' })).body).status as Record<string, unknown>
      expect(xml.haiku_text).toBe('x')
      expect(xml.html).toBeUndefined()
    })
  })
})
