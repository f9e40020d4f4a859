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
  return { ok: true, form: new URLSearchParams(body.toString('utf8')) }
}

/** One field; null when absent or given more than once (a form never repeats these). */
export function field(form: URLSearchParams, name: string): string | null {
  const all = form.getAll(name)
  return all.length === 1 ? all[0]! : null
}
