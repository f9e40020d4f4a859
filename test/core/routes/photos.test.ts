// The photo service (docs/api.md#photos) and the generated profile icons (docs/api.md#objects).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import Value from 'typebox/value'
import { PhotoJson } from '../../../src/core/render/schemas.js'
import { images, multipart, parseXml, routeBackends, startHarness, type Harness, type Part } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'
import { jpegHeader, pngHeader } from '../../helpers/image-headers.js'

let h: Harness

describeEachBackend('photos routes', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
  })
  afterAll(async () => {
    await h?.close()
  })

  const create = (parts: Part[], opts: { as?: string; ext?: string; host?: string } = {}) =>
    h.call({ method: 'POST', url: `/api/photos/create.${opts.ext ?? 'json'}`, ...(opts.host ? { host: opts.host } : {}), ...(opts.as === '' ? {} : { as: opts.as ?? 'alice' }), ...multipart(parts) })

  describe('photos/create', () => {
    test('a Photo in JSON; the image_url returns the bytes', async () => {
      const res = await create([['file', { bytes: images.webp, filename: 'x.jpg', type: 'image/jpeg' }], ['title', ' Sunset '], ['folder', 'trips'], ['source', 'cam']])
      expect(res.statusCode).toBe(200)
      const p = res.json()
      expect(Value.Check(PhotoJson, p)).toBe(true)
      expect(p).toMatchObject({
        title: 'Sunset',
        folder: 'trips',
        source: 'cam',
        url: `http://kigo.example:8080/photos/alice/${p.id}`,
        image_url: `http://kigo.example:8080/photos/alice/${p.id}.webp`,
        user: { id: 'alice', name: 'alice name' },
      })
      const img = await h.call({ url: `/photos/alice/${p.id}.webp` })
      expect(img.statusCode).toBe(200)
      expect(img.headers['content-type']).toBe('image/webp')
      expect(img.rawPayload.equals(images.webp)).toBe(true)
    })

    test('XML, and the deployment of the host it was posted to', async () => {
      const res = await create([['file', { bytes: images.gif }]], { ext: 'xml', host: 'global.kigo.example' })
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8')
      const p = parseXml(res.body).photo as Record<string, string>
      expect(p).toMatchObject({ title: '', folder: '', source: 'API' })
      expect(p.image_url).toBe(`http://global.kigo.example/photos/alice/${p.id}.gif`)
    })

    test('bad uploads: no file 400, two files 400, not an image 415, anonymous 401, bad title 400', async () => {
      const cases: Array<[Part[], number, string, string?]> = [
        [[['title', 'no file']], 400, 'file_required'],
        [[['file', { bytes: images.png }], ['file', { bytes: images.png }]], 400, 'too_many_files'],
        [[['file', { bytes: Buffer.from('GIF8') }]], 415, 'not_an_image'],
        // A signature whose header does not follow, and a decompression bomb's declared size.
        [[['file', { bytes: pngHeader(1, 1).subarray(0, 8) }]], 415, 'not_an_image'],
        [[['file', { bytes: pngHeader(100_000, 100_000) }]], 415, 'not_an_image'],
        [[['file', { bytes: jpegHeader(20_000, 10) }]], 415, 'not_an_image'],
        [[['file', { bytes: images.png }]], 401, 'authentication_required', ''],
        [[['file', { bytes: images.png }], ['title', 'a\u0007b']], 400, 'invalid_title'],
        [[['file', { bytes: images.png }], ['folder', 'f'.repeat(256)]], 400, 'folder_too_long'],
      ]
      const before = (await create([['file', { bytes: images.png }]])).json().id
      for (const [parts, status, code, as] of cases) {
        const res = await create(parts, as === undefined ? {} : { as })
        expect(res.statusCode, code).toBe(status)
        expect(res.json().error.code).toBe(code)
      }
      const after = (await create([['file', { bytes: images.png }]])).json().id
      expect(BigInt(after)).toBe(BigInt(before) + 1n)
    })
  })

  describe('GET /photos/{user}/{id}.{ext}', () => {
    test('strong ETag, immutable caching, 304 on If-None-Match', async () => {
      const p = (await create([['file', { bytes: images.jpg }]])).json()
      const path = new URL(p.image_url).pathname
      const res = await h.call({ url: path })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('image/jpeg')
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      const etag = res.headers.etag as string
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/)
      expect(Number(res.headers['content-length'])).toBe(images.jpg.length)
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const cached = await h.call({ url: path, headers: { 'if-none-match': inm } })
        expect(cached.statusCode, inm).toBe(304)
        expect(cached.headers.etag).toBe(etag)
        expect(cached.body).toBe('')
      }
      expect((await h.call({ url: path, headers: { 'if-none-match': '"other"' } })).statusCode).toBe(200)
      const head = await h.call({ method: 'HEAD', url: path })
      expect(head.statusCode).toBe(200)
      expect(head.headers['content-type']).toBe('image/jpeg')
    })

    test('wrong extension, wrong user, unknown or malformed IDs: 404', async () => {
      const p = (await create([['file', { bytes: images.png }]])).json()
      for (const path of [`/photos/alice/${p.id}.jpg`, `/photos/bob/${p.id}.png`, '/photos/alice/99999999.png', '/photos/alice/x.png', '/photos/a/1.png']) {
        const res = await h.call({ url: path })
        expect(res.statusCode, path).toBe(404)
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      }
    })

    test('the photo page (url) shows the image', async () => {
      const p = (await create([['file', { bytes: images.png }], ['title', '<b>"x"</b>']])).json()
      const page = await h.call({ url: new URL(p.url).pathname })
      expect(page.statusCode).toBe(200)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(page.body).toContain(`<img src="${p.image_url}" alt="&lt;b&gt;&quot;x&quot;&lt;/b&gt;">`)
    })
  })

  describe('GET /users/{id}/profile.png', () => {
    test('a generated PNG with a validator', async () => {
      const res = await h.call({ url: '/users/alice/profile.png' })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('image/png')
      expect(res.rawPayload.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      const again = await h.call({ url: '/users/alice/profile.png', headers: { 'if-none-match': res.headers.etag as string } })
      expect(again.statusCode).toBe(304)
      const other = await h.call({ url: '/users/bob_2/profile.png' })
      expect(other.rawPayload.equals(res.rawPayload)).toBe(false)
    })

    test('a name that cannot be a user: 404', async () => {
      expect((await h.call({ url: '/users/a/profile.png' })).statusCode).toBe(404)
      expect((await h.call({ url: '/users/1abc/profile.png' })).statusCode).toBe(404)
    })
  })
})
