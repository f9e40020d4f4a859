// The client a request says it is (docs/gateway.md#the-usage-report): the `source` parameter (query, or an
// application/x-www-form-urlencoded body), else the User-Agent. Bounded and cleaned so
// that it can be stored, shown and matched against policy exceptions. A multipart
// body's `source` is not read: those bodies are streamed, never parsed, at the gateway.
import { LRUCache } from 'lru-cache'
import { isFormContentType } from '../../common/formats.js'
import type { AuthRequest } from '../domain/auth.js'

/** Longest client name kept (the same bound as an entry's `source`, docs/api.md#statusesupdate rule 7). */
export const maxClientLength = 64

/** Longest query or body the search for `source` scans (form bodies are at most 1 MiB). */
const maxScan = 64 * 1024

function sourceIn(encoded: string): string | null {
  if (!encoded.includes('source=')) return null
  const value = new URLSearchParams(encoded.length > maxScan ? encoded.slice(0, maxScan) : encoded).get('source')
  return value === null || value.trim() === '' ? null : value
}

/**
 * Names already cleaned, by what the client sent: nearly every request of a client sends
 * the same User-Agent, and cleaning it again cost 1.5 µs per verified request. The least
 * recently seen go first (lru-cache, as the credential cache), so a client sending a new
 * name on every request cannot push the others out all at once; what is sent longer than
 * maxRememberedLength is cleaned each time, never kept, since the client chooses the text.
 */
const cleanedNames = new LRUCache<string, string>({ max: 1000 })
const maxRememberedLength = 512

function cleaned(raw: string): string {
  if (raw.length > maxRememberedLength) return cleanClientName(raw)
  let name = cleanedNames.get(raw)
  if (name === undefined) {
    name = cleanClientName(raw)
    cleanedNames.set(raw, name)
  }
  return name
}

/** Control characters go, white space runs become one space, at most 64 characters. */
export function cleanClientName(raw: string): string {
  const text = raw.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim()
  const chars = Array.from(text)
  return chars.length > maxClientLength ? chars.slice(0, maxClientLength).join('').trimEnd() : text
}

export function clientName(req: Pick<AuthRequest, 'url' | 'headers' | 'contentType' | 'body'>): string {
  const q = req.url.indexOf('?')
  let source = q === -1 ? null : sourceIn(req.url.slice(q + 1))
  if (source === null && req.body !== undefined && isFormContentType(req.contentType)) {
    source = sourceIn(req.body.subarray(0, maxScan).toString('utf8'))
  }
  if (source !== null) return cleaned(source)
  const ua = req.headers['user-agent']
  return cleaned(typeof ua === 'string' ? ua : Array.isArray(ua) ? ua[0] ?? '' : '')
}

/**
 * The family of a client name, so that a new version of the same client is recognised:
 * the product token without its version ("HaikuDroid/4.0 (Android 14)" → "haikudroid"), or
 * a `source` name without a trailing version ("feed robot 2.1" → "feed robot"). Case is
 * ignored; a name without a version is its own family.
 */
export function clientFamily(name: string): string {
  const text = name.trim()
  const product = /^(.+?)\/\s*v?\d/i.exec(text)
  const base = product ? product[1]! : text.replace(/[\s/_-]*v?\d+(?:\.\d+)*(?:[-.+]?[a-z0-9]+)*$/i, '')
  return (base.trim() === '' ? text : base.trim()).toLowerCase()
}
