// Parameters of the list operations (docs/api.md#timelines): `count`, `page`, `since`, `sort`, and
// the path segments `{id}` and `{word}` whose last segment carries the format extension.
import type { FastifyRequest } from 'fastify'
import { errors } from '../../common/errors.js'
import { parseId, userIdPattern } from '../entries/ids.js'
import type { Params } from './params.js'
import { contextOf, requester, routeOf } from './context.js'

/** Whole number in [min, max], `fallback` when absent or empty; else 400 naming it. */
export function intParam(params: Params, name: string, fallback: number, min: number, max: number): number {
  const v = params.get(name)
  if (v === undefined || v === '') return fallback
  const n = /^[0-9]{1,6}$/.test(v) ? Number(v) : NaN
  if (!(n >= min && n <= max)) throw errors.badRequest('invalid_parameter', `${name} must be a whole number from ${min} to ${max}`)
  return n
}

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
// RFC 9110 §5.6.7 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
const imfFixdate = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/
// ISO 8601 in UTC: `2026-11-21T09:30:00Z`, optional fraction, `Z` or `+00:00`.
const isoUtc = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]{1,9})?(?:Z|\+00:?00)$/

function utc(y: string, mo: number, d: string, h: string, mi: string, s: string): Date | null {
  const date = new Date(Date.UTC(Number(y), mo, Number(d), Number(h), Number(mi), Number(s)))
  // Date.UTC rolls 31 Feb over into March: such a date is not a date.
  const ok = date.getUTCFullYear() === Number(y) && date.getUTCMonth() === mo && date.getUTCDate() === Number(d) &&
    date.getUTCHours() === Number(h) && date.getUTCMinutes() === Number(mi) && date.getUTCSeconds() === Number(s)
  return ok ? date : null
}

/** `since`: an HTTP date or an ISO 8601 UTC time; absent, empty: none. */
export function sinceParam(params: Params): Date | null {
  const v = params.get('since')
  if (v === undefined || v === '') return null
  let date: Date | null = null
  const imf = imfFixdate.exec(v)
  const iso = isoUtc.exec(v)
  if (imf) date = utc(imf[4]!, months.indexOf(imf[3]!), imf[2]!, imf[5]!, imf[6]!, imf[7]!)
  else if (iso) date = utc(iso[1]!, Number(iso[2]) - 1, iso[3]!, iso[4]!, iso[5]!, iso[6]!)
  if (!date) {
    throw errors.badRequest('invalid_parameter', 'since must be an HTTP date (Sun, 06 Nov 1994 08:49:37 GMT) or an ISO 8601 UTC time (1994-11-06T08:49:37Z)')
  }
  return date
}

export function sortParam(params: Params): 'new' | 'hot' {
  const v = params.get('sort')
  if (v === undefined || v === '' || v === 'new') return 'new'
  if (v === 'hot') return 'hot'
  throw errors.badRequest('invalid_parameter', 'sort must be new or hot')
}

/** `max_id`: the newest entry a page may list, so that asking again gives the same page. */
export function maxIdParam(params: Params): string | null {
  const v = params.get('max_id')
  if (v === undefined || v === '') return null
  const id = parseId(v)
  if (id === null) throw errors.badRequest('invalid_parameter', 'max_id must be an entry ID (digits)')
  return id
}

export const listParamNames = ['count', 'page', 'since', 'sort', 'max_id'] as const

/** A path parameter without the format extension the router left on the last segment. */
export function segmentOf(request: FastifyRequest, name: string): string {
  const raw = (request.params as Record<string, string | undefined>)[name] ?? ''
  return raw.replace(/\.(json|xml)$/, '')
}

/**
 * A user ID as a client wrote it: `id:NAME` is the user NAME, as the user's keyword names
 * them (docs/api-differences.md#user-ids-written-as-keywords).
 */
export function userIdOf(written: string): string {
  return written.startsWith('id:') ? written.slice(3) : written
}

/**
 * The user a read or write of "a user" is about (docs/api-differences.md#id-parameter): the
 * path's `{id}`, else the `id` parameter, else (the forms without `/{id}`) the requester.
 * Either may be written `id:NAME` (userIdOf). A path `{id}` and an `id` that name different
 * users: 400 naming both. A user ID that cannot exist: 404.
 */
export function subjectOf(request: FastifyRequest, params: Params): string {
  const written = params.get('id') || undefined
  const given = written === undefined ? undefined : userIdOf(written)
  const inPath = (request.params as Record<string, string | undefined>).id !== undefined
  let id: string
  if (inPath) {
    id = userIdOf(segmentOf(request, 'id'))
    if (given !== undefined && given !== id) {
      throw errors.badRequest('conflicting_id', `The path names user ${JSON.stringify(id.slice(0, 40))} and id names ${JSON.stringify(given.slice(0, 40))}: give one of them, or the same user in both`)
    }
  } else if (given !== undefined) {
    // The operation was chosen from the query and an urlencoded body (app.ts); an `id`
    // found only now came in a multipart body, and would run another operation.
    const ctx = contextOf(request)
    if (ctx.operation === routeOf(request).operation) {
      throw errors.badRequest('invalid_parameter', 'Send id in the query or an application/x-www-form-urlencoded body, not a multipart one')
    }
    id = given
  } else {
    return requester(request).user
  }
  if (!userIdPattern.test(id)) throw errors.notFound('user_not_found', 'No such user')
  return id
}

/** The keyword of `?word=` or of the `{word}` segment; 400 when neither names one. */
export function wordOf(request: FastifyRequest, params: Params, name = 'word'): string {
  const fromPath = (request.params as Record<string, string | undefined>).word
  const word = (fromPath !== undefined ? segmentOf(request, 'word') : params.get(name) ?? '').trim()
  if (word === '') throw errors.badRequest('word_required', `${name} is required`)
  return word
}
