// Response formats (docs/api.md#objects, docs/api.md#callback-and-body_formats, docs/api.md#errors).
import { describe, expect, it } from 'vitest'
import { XMLParser } from 'fast-xml-parser'
import { formatOfPath, isValidCallback, render, renderError, xmlDocument, xmlSafe } from '../../src/common/formats.js'

describe('formats', () => {
  it('takes the format from the extension, JSON without one, null for others', () => {
    expect(formatOfPath('/api/statuses/show/1.json')).toBe('json')
    expect(formatOfPath('/api/statuses/show/1.xml?callback=x')).toBe('xml')
    expect(formatOfPath('/api/statuses/show/1')).toBe('json')
    expect(formatOfPath('/api/statuses/show/1.html')).toBeNull()
  })

  it('accepts only dotted identifiers of at most 128 characters as callbacks', () => {
    expect(isValidCallback('cb')).toBe(true)
    expect(isValidCallback('$.jsonp_1.done')).toBe(true)
    expect(isValidCallback('a'.repeat(128))).toBe(true)
    expect(isValidCallback('a'.repeat(129))).toBe(false)
    for (const bad of ['', '1a', 'a..b', 'a.', 'alert(1)', 'a;b', 'a b', 'a-b', 'ä']) expect(isValidCallback(bad)).toBe(false)
  })

  it('wraps JSONP with nosniff and keeps U+2028 safe', () => {
    const out = render('json', 'status', { text: 'a\u2028b' }, {}, 'cb.done')
    expect(out.contentType).toBe('application/javascript; charset=utf-8')
    expect(out.headers['x-content-type-options']).toBe('nosniff')
    expect(out.body).toBe('cb.done({"text":"a\\u2028b"});')
  })

  it('writes XML every parser accepts, replacing characters XML cannot carry', () => {
    const text = 'ok <&> "\'" \u0001\u0008\u000b\ufffe \ud800 tab\tnl\n 😀'
    const doc = xmlDocument('status', { text, none: null, n: 0, user: { id: 'x' } })
    expect(doc.startsWith('<?xml version="1.0" encoding="UTF-8"?><status>')).toBe(true)
    const parsed = new XMLParser({ parseTagValue: false, trimValues: false }).parse(doc)
    expect(parsed.status.text).toBe(xmlSafe(text))
    expect(parsed.status.text).toContain('\uFFFD')
    expect(parsed.status.text).toContain('😀')
    expect(parsed.status.none).toBe('')
    expect(parsed.status.user.id).toBe('x')
  })

  it('renders errors in the docs/api.md#errors shape in both formats', () => {
    const err = { status: 404, code: 'entry_not_found', message: 'No such entry' }
    expect(JSON.parse(renderError('json', err).body)).toEqual({ error: err })
    const xml = new XMLParser().parse(renderError('xml', err).body)
    expect(xml.error).toEqual({ status: 404, code: 'entry_not_found', message: 'No such entry' })
  })
})
