// Form posts of the pages: the gateway reads urlencoded bodies whole into a Buffer (they
// may be OAuth-signed elsewhere), so the pages parse that Buffer themselves.
import { isUtf8 } from 'node:buffer'
import type { FastifyRequest } from 'fastify'
import { isFormContentType } from '../../common/formats.js'

export type FormResult = { ok: true; form: URLSearchParams } | { ok: false; status: 400 | 415; message: string }

export function readForm(request: FastifyRequest): FormResult {
  const body = request.body
  if (!isFormContentType(request.headers['content-type']) || !Buffer.isBuffer(body)) {
    // Another content type arrives as an unread stream: drain it so the connection stays usable.
    const stream = body as { resume?: () => void } | undefined
    if (stream && typeof stream.resume === 'function') stream.resume()
    if (body === undefined || body === null) return { ok: true, form: new URLSearchParams() }
    return { ok: false, status: 415, message: 'Forms must be sent as application/x-www-form-urlencoded.' }
  }
  if (!isUtf8(body)) return { ok: false, status: 400, message: 'The form is not UTF-8.' }
  const form = new URLSearchParams(body.toString('utf8'))
  // A field given twice is refused here, for every form, rather than read as absent or as
  // one of its values by each page: two parsers (a proxy, a framework, this one) that
  // pick different copies are how a checked value gets swapped for another.
  const seen = new Set<string>()
  for (const name of form.keys()) {
    if (seen.has(name) && !repeatable.has(name)) return { ok: false, status: 400, message: `The field “${name.slice(0, 40)}” is given more than once; a form sends it once.` }
    seen.add(name)
  }
  return { ok: true, form }
}

/** The fields a form may give several times (a checkbox per scope). */
const repeatable = new Set(['scope', 'api_scope'])

/** One field; null when absent (readForm refused a repeated one already). */
export function field(form: URLSearchParams, name: string): string | null {
  const all = form.getAll(name)
  return all.length === 1 ? all[0]! : null
}
