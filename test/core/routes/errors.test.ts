// Paths, extensions, health, and failures of the store (docs/api.md, docs/api.md#errors, docs/operations.md#dependability).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { form, parseXml, routeBackends, startHarness, type Harness } from '../helpers/harness.js'
import { describeEachBackend } from '../../helpers/backends.js'

let h: Harness

describeEachBackend('core errors', routeBackends, (storage) => {
  beforeAll(async () => {
    h = await startHarness({}, storage)
  })
  afterAll(async () => {
    await h?.close()
  })

  describe('paths', () => {
    test('an unknown path: 404 in JSON', async () => {
      for (const url of ['/nope', '/api/statuses/unknown.json', '/api/statuses/show/1/2.json', '/api/statuses/update.json/extra']) {
        const res = await h.call({ url })
        expect(res.statusCode, url).toBe(404)
        expect(res.json()).toEqual({ error: { status: 404, code: 'not_found', message: expect.any(String) } })
      }
    })

    test('an unknown extension: 404 in JSON', async () => {
      const e = (await h.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ status: 'x' }) })).json()
      for (const [method, url] of [['GET', `/api/statuses/show/${e.id}.html`], ['GET', `/api/statuses/show/${e.id}.JSON`], ['POST', '/api/statuses/update.yaml'], ['POST', `/api/favorites/create/${e.id}.txt`]] as const) {
        const res = await h.call({ method, url, as: 'alice' })
        expect(res.statusCode, url).toBe(404)
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      }
      expect(await h.store.hasStar(e.id, 'alice')).toBe(false)
    })

    test('bad percent-encoding in the path: 400', async () => {
      const res = await h.call({ url: '/api/statuses/show/%E0%A4%A.json' })
      expect(res.statusCode).toBe(400)
      expect(res.json().error.status).toBe(400)
    })

    test('unknown deployment for reads too, in format', async () => {
      const res = await h.call({ url: '/api/statuses/show/1.xml', host: 'other.example' })
      expect(res.statusCode).toBe(400)
      expect(parseXml(res.body).error).toMatchObject({ status: '400', code: 'unknown_deployment' })
    })

    test('API responses are not cached by shared caches', async () => {
      const res = await h.call({ url: '/api/statuses/show/1.json' })
      expect(res.headers['cache-control']).toBe('no-store')
    })
  })

  describe('health', () => {
    test('/healthz and /readyz answer 200 while the store is up', async () => {
      expect((await h.call({ url: '/healthz' })).json()).toEqual({ status: 'ok' })
      const ready = await h.call({ url: '/readyz' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({ status: 'ready' })
    })
  })

  describe('a failing store', () => {
    test('503 with Retry-After and a generic message, never a stack; /readyz 503; /healthz still 200', async () => {
      const down = await startHarness({}, storage)
      try {
        const e = (await down.call({ method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ status: 'x' }) })).json()
        await down.store.close()
        for (const req of [
          { url: `/api/statuses/show/${e.id}.json` },
          { method: 'POST', url: '/api/statuses/update.json', as: 'alice', ...form({ status: 'y' }) },
          { method: 'POST', url: `/api/favorites/create/${e.id}.xml`, as: 'bob' },
        ]) {
          const res = await down.call(req)
          expect(res.statusCode, req.url).toBe(503)
          expect(res.headers['retry-after']).toBeDefined()
          expect(res.body).not.toMatch(/at .*\.(ts|js):[0-9]+|Error:|PGlite|closed/i)
        }
        const ready = await down.call({ url: '/readyz' })
        expect(ready.statusCode).toBe(503)
        expect(ready.json().error.code).toBe('store_unavailable')
        expect((await down.call({ url: '/healthz' })).statusCode).toBe(200)
      } finally {
        // The store is closed already; closing it again may fail, the rest is still undone.
        await down.close().catch(() => undefined)
      }
    })
  })
})
