// canonicalPath (src/common/route-table.ts): the one reading of a path that the gateway
// routes by and the core checks again. The HTTP differential suite sends these spellings
// through both apps; this pins the function's own answers.
import { describe, expect, it } from 'vitest'
import { canonicalPath } from '../../src/common/route-table.js'

const refused = (raw: string) => {
  const c = canonicalPath(raw)
  return c.ok ? null : c.reason
}

describe('canonicalPath', () => {
  it('keeps a plain path as it is, and decodes only unreserved characters, hex upper-cased', () => {
    expect(canonicalPath('/api/statuses/show/123.json')).toEqual({ ok: true, path: '/api/statuses/show/123.json' })
    expect(canonicalPath('/')).toEqual({ ok: true, path: '/' })
    expect(canonicalPath('/api/keywords/show/')).toEqual({ ok: true, path: '/api/keywords/show/' })
    expect(canonicalPath('/api/%73tatuses/show/1%2ejson')).toEqual({ ok: true, path: '/api/statuses/show/1.json' })
    expect(canonicalPath('/api/keywords/show/%e3%81%82x')).toEqual({ ok: true, path: '/api/keywords/show/%E3%81%82x' })
    expect(canonicalPath('/a%7E%2D%5F')).toEqual({ ok: true, path: '/a~-_' })
  })

  it('refuses dot segments and empty segments however spelled, wherever they are', () => {
    for (const p of ['/.', '/..', '/a/.', '/a/..', '/./a', '/a/../b', '/a/%2e/b', '/a/%2E%2E', '/.%2e/a']) expect(refused(p), p).toMatch(/"\." or "\.\."/)
    for (const p of ['//', '//a', '/a//b', '/a//']) expect(refused(p), p).toMatch(/"\/\/"/)
    // Dots inside a segment are not dot segments.
    expect(canonicalPath('/a/.b/..c/...')).toEqual({ ok: true, path: '/a/.b/..c/...' })
  })

  it('refuses what two parsers could read differently', () => {
    expect(refused('api/statuses')).toMatch(/origin-form/)
    expect(refused('http://kigo.example/api')).toMatch(/origin-form/)
    for (const p of ['/a\\b', '/a;x=1', '/a#f']) expect(refused(p), p).toMatch(/must not contain/)
    for (const p of ['/a%2Fb', '/a%2fb', '/a%5Cb', '/a%25', '/a%3F', '/a%23', '/a%3B', '/a%00']) expect(refused(p), p).toMatch(/encoded/)
    for (const p of ['/a%', '/a%4', '/a%G1', '/a%%41']) expect(refused(p), p).toMatch(/percent-encoded/)
    for (const p of ['/a b', '/a\u00e9', '/a\u007f', '/a\t']) expect(refused(p), p).toMatch(/printable ASCII/)
  })

  it("keeps an encoded slash in a keyword page's one segment only, and nowhere else", () => {
    expect(canonicalPath('/keyword/a%2Fb')).toEqual({ ok: true, path: '/keyword/a%2Fb' })
    expect(canonicalPath('/keyword/%61%2fb')).toEqual({ ok: true, path: '/keyword/a%2Fb' })
    expect(canonicalPath('/keyword/%2F')).toEqual({ ok: true, path: '/keyword/%2F' })
    for (const p of ['/keyword/a%2Fb/', '/keyword/a%2Fb/c', '/keyword%2Fa', '/keywords/a%2Fb', '/Keyword/a%2Fb', '/%6Beyword/a%2Fb', '/api/keywords/show/a%2Fb', '/api/statuses/keyword_timeline/a%2Fb.json', '/frank/a%2Fb', '/keyword/a%5Cb', '/keyword/a%3Fb']) {
      expect(refused(p), p).toMatch(/encoded/)
    }
  })
})
