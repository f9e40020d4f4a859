// The html tag every page is written with: each interpolation is escaped, in text and in
// quoted attributes, unless it is markup built by the tag itself.
import { describe, expect, it } from 'vitest'
import { html, joinHtml, timeHtml, trusted } from '../../src/common/html.js'

const attack = `"><script>alert('x')</script><a href='javascript:1'>&amp;`

describe('html', () => {
  it('escapes text, and quotes of both kinds in attributes', () => {
    const out = html`<p title="${attack}" data-x='${attack}'>${attack}</p>`.value
    expect(out).toBe(`<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;a href=&#39;javascript:1&#39;&gt;&amp;amp;" data-x='&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;a href=&#39;javascript:1&#39;&gt;&amp;amp;'>&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;a href=&#39;javascript:1&#39;&gt;&amp;amp;</p>`)
    expect(out).not.toContain('<script')
  })

  it('keeps markup built by the tag, escapes each item of a list and joins it', () => {
    const items = ['<b>', 'a&b'].map((t) => html`<li>${t}</li>`)
    expect(html`<ul>${items}</ul>`.value).toBe('<ul><li>&lt;b&gt;</li><li>a&amp;b</li></ul>')
    expect(joinHtml(['<i>', html`<br>`], ', ').value).toBe('&lt;i&gt;, <br>')
    expect(html`${trusted('<svg></svg>')}`.value).toBe('<svg></svg>')
  })

  it('writes nothing for null, undefined and booleans, and numbers as they are', () => {
    expect(html`[${null}${undefined}${false}${true}${0}${12.5}]`.value).toBe('[012.5]')
  })

  it('writes every instant as one <time> element', () => {
    const at = Date.UTC(2026, 10, 27, 2, 10, 53)
    expect(timeHtml(at).value).toBe('<time datetime="2026-11-27T02:10:53Z" title="2026-11-27T02:10:53Z">27 Nov 2026, 02:10 UTC</time>')
    expect(timeHtml(new Date(at), { dateOnly: true, local: true }).value).toBe('<time datetime="2026-11-27T02:10:53Z" title="2026-11-27T02:10:53Z" data-local="datetime">27 Nov 2026</time>')
  })
})
