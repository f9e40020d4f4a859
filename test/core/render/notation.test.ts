import { describe, expect, test } from 'vitest'
import { renderNotation, touchImageClass } from '../../../src/core/render/notation.js'
import { isPhotoUrl } from '../../../src/core/render/urls.js'

const hosts = { domesticHost: 'kigo.example', globalHost: 'global.example', publicScheme: 'https' as const }
const ctx = { baseUrl: 'https://kigo.example', isPhotoUrl: (u: string) => isPhotoUrl(hosts, u) }
const html = (body: string) => renderNotation(body, 'html', ctx)

describe('HTML notation (docs/api.md#callback-and-body_formats)', () => {
  test('everything is escaped and newlines become <br>', () => {
    expect(html(`a < b & "c" 'd'\r\nline2\nline3`)).toBe('a &lt; b &amp; &quot;c&quot; &#39;d&#39;<br>line2<br>line3')
  })

  test('id:NAME links to the user page', () => {
    expect(html('hi id:alice!')).toBe('hi <a href="https://kigo.example/alice/">id:alice</a>!')
    // Not inside a word, and not a name that is not a user ID.
    expect(html('paid:alice id:ab')).toBe('paid:alice id:ab')
  })

  test('[[WORD]] and [keyword:WORD] link to the keyword page, percent-encoded', () => {
    expect(html('[[spring rain]]')).toBe('<a href="https://kigo.example/keyword/spring%20rain">spring rain</a>')
    expect(html('[keyword:季語]')).toBe('<a href="https://kigo.example/keyword/%E5%AD%A3%E8%AA%9E">季語</a>')
    expect(html(`[[a/b?c#d'"<x>]]`)).toBe(
      '<a href="https://kigo.example/keyword/a%2Fb%3Fc%23d%27%22%3Cx%3E">a/b?c#d&#39;&quot;&lt;x&gt;</a>',
    )
  })

  test('bare http and https URLs become links; trailing punctuation stays text', () => {
    expect(html('see https://a.example/x?y=1&z=2.')).toBe(
      'see <a href="https://a.example/x?y=1&amp;z=2" rel="nofollow">https://a.example/x?y=1&amp;z=2</a>.',
    )
    expect(html('(http://a.example/wiki/Foo_(bar))')).toBe(
      '(<a href="http://a.example/wiki/Foo_(bar)" rel="nofollow">http://a.example/wiki/Foo_(bar)</a>)',
    )
  })

  test('image URLs: an image in a link, a width-limited one in html_touch, a plain link in html_mobile', () => {
    const url = 'http://img.example/cat.JPG'
    expect(html(url)).toBe(`<a href="${url}" rel="nofollow"><img src="${url}" alt=""></a>`)
    expect(renderNotation(url, 'html_touch', ctx)).toBe(`<a href="${url}" rel="nofollow"><img src="${url}" class="${touchImageClass}" alt=""></a>`)
    expect(renderNotation(url, 'html_mobile', ctx)).toBe(`<a href="${url}" rel="nofollow">${url}</a>`)
    const photo = 'https://global.example/photos/alice/12.png'
    expect(html(photo)).toContain(`<img src="${photo}"`)
  })

  describe('hostile input never produces markup', () => {
    const hostile = [
      '"><script>alert(1)</script>',
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1) [[x]]',
      'http://a.example/"onmouseover="alert(1)',
      "http://a.example/'onmouseover='alert(1)",
      'http://a.example/<img src=x onerror=alert(1)>',
      '[[<script>]] [keyword:"><img src=x>]',
      'data:text/html;base64,PHNjcmlwdD4=',
      'http://a.example/x.png"><svg onload=alert(1)>',
      'vbscript:x https:/broken http:// http://[::1',
    ]
    for (const body of hostile) {
      test(JSON.stringify(body), () => {
        for (const variant of ['html', 'html_touch', 'html_mobile'] as const) {
          const out = renderNotation(body, variant, ctx)
          // The only tags are the ones the renderer makes.
          const tags = out.match(/<[^>]*>/g) ?? []
          for (const tag of tags) expect(tag).toMatch(/^(<a href="(https?:\/\/[^"<>\s]*)"( rel="nofollow")?>|<\/a>|<br>|<img src="https?:\/\/[^"<>\s]*"( class="[a-z-]+")? alt="">)$/)
          // Every href is http(s) and no attribute can be broken out of.
          for (const m of out.matchAll(/(href|src)="([^"]*)"/g)) expect(m[2]).toMatch(/^https?:\/\//)
          expect(out).not.toMatch(/<script|<svg|<img src=x/i)
        }
      })
    }
    test('a javascript: URL is text', () => {
      expect(html('javascript:alert(1)')).toBe('javascript:alert(1)')
    })
    test('a quote ends a URL', () => {
      expect(html('http://a.example/"x')).toBe('<a href="http://a.example/" rel="nofollow">http://a.example/</a>&quot;x')
    })
  })
})
