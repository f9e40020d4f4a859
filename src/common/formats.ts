// Response formats of the public API (docs/api.md#objects, docs/api.md#callback-and-body_formats, docs/api.md#errors): JSON, XML and JSONP;
// and the one request body format read as parameters, the form.
import { XMLBuilder } from 'fast-xml-parser'

export type Format = 'json' | 'xml'

/**
 * The format named by a path's extension: `.json`, `.xml`, or JSON when the last segment
 * has no extension. Any other extension is unknown (null), which routes answer with 404.
 */
export function formatOfPath(path: string): Format | null {
  const q = path.indexOf('?')
  const p = q === -1 ? path : path.slice(0, q)
  const last = p.slice(p.lastIndexOf('/') + 1)
  const dot = last.lastIndexOf('.')
  if (dot === -1) return 'json'
  const ext = last.slice(dot + 1)
  return ext === 'json' ? 'json' : ext === 'xml' ? 'xml' : null
}

const callbackPattern = /^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/

/** docs/api.md#callback-and-body_formats: a JSONP callback name is a dotted JavaScript identifier of at most 128 characters. */
export function isValidCallback(name: string): boolean {
  return name.length <= 128 && callbackPattern.test(name)
}

// XML 1.0 §2.2 Char: anything else (most C0 controls, lone surrogates, U+FFFE/U+FFFF)
// cannot appear in a document at all, so it is replaced by U+FFFD.
const notXmlChar = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

export function xmlSafe(text: string): string {
  return text.replace(notXmlChar, '\uFFFD')
}

/** An array is one element per item, all with the key's name (`{ status: [a, b] }`). */
export type XmlValue = string | number | null | XmlObject | XmlValue[]
/** Keys starting with `@_` are attributes (`{ '@_type': 'array' }`). */
export interface XmlObject { [name: string]: XmlValue }

const builder = new XMLBuilder({ ignoreAttributes: false, format: false, suppressEmptyNode: false })

function cleanValue(v: XmlValue): unknown {
  if (v === null) return ''
  if (typeof v === 'string') return xmlSafe(v)
  if (typeof v === 'number') return String(v)
  if (Array.isArray(v)) return v.map(cleanValue)
  return cleanForXml(v)
}

function cleanForXml(value: XmlObject): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[k] = cleanValue(v)
  return out
}

/** `<?xml version="1.0" encoding="UTF-8"?>` and one root element; null values are empty elements. */
export function xmlDocument(root: string, value: XmlObject): string {
  return builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' }, [root]: cleanForXml(value) })
}

export const contentTypes = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  jsonp: 'application/javascript; charset=utf-8',
} as const

export interface Rendered {
  contentType: string
  body: string
  headers: Record<string, string>
}

/**
 * Renders a payload. `json` is the JSON value; `xml` its XML shape (they differ for a few
 * fields, docs/api.md#objects). A valid `callback` wraps JSON as JSONP; it is ignored for XML.
 */
export function render(format: Format, root: string, json: unknown, xml: XmlObject, callback?: string): Rendered {
  if (format === 'xml') return { contentType: contentTypes.xml, body: xmlDocument(root, xml), headers: {} }
  const text = JSON.stringify(json)
  if (callback !== undefined && callback !== '' && isValidCallback(callback)) {
    // U+2028/2029 are valid in JSON but ended string literals in older JavaScript engines.
    const safe = text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
    return {
      contentType: contentTypes.jsonp,
      body: `${callback}(${safe});`,
      headers: { 'x-content-type-options': 'nosniff' },
    }
  }
  return { contentType: contentTypes.json, body: text, headers: {} }
}

/** docs/api.md#errors error body in the given format (JSONP-wrapped when a valid callback was asked for). */
export function renderError(format: Format, err: { status: number; code: string; message: string }, callback?: string): Rendered {
  const error = { status: err.status, code: err.code, message: err.message }
  return render(format, 'error', { error }, error, callback)
}

/** A size as people read it: "10 MiB", "512 KiB", "1.5 MiB", or "300 bytes" below 1 KiB. */
export function byteSize(bytes: number): string {
  const units: Array<[string, number]> = [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]]
  for (const [unit, size] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`
  }
  return `${bytes} byte${bytes === 1 ? '' : 's'}`
}

/** True for `application/x-www-form-urlencoded`, parameters such as charset allowed. */
export function isFormContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  const type = 'application/x-www-form-urlencoded'
  if (contentType.length < type.length) return false
  if (contentType.slice(0, type.length).toLowerCase() !== type) return false
  const rest = contentType.charCodeAt(type.length)
  // End, ";" or white space before parameters.
  return Number.isNaN(rest) || rest === 59 || rest === 32 || rest === 9
}
