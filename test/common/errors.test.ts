import { describe, expect, it } from 'vitest'
import { DeadlineExceeded } from '../../src/common/deadline.js'
import { ApiError, classifyFailure, errorCodes, errors, failureResponse, Unavailable, type FailureWording } from '../../src/common/errors.js'
import { CoreUnreachable } from '../../src/gateway/proxy/forward.js'
import { FormBytesBusy } from '../../src/gateway/plugins/body-parsers.js'
import { StoreNotReady } from '../../src/core/routes/health.js'
import { UploadsBusy } from '../../src/core/routes/upload-guard.js'

/** An error as node-postgres raises it: the SQLSTATE in `code`. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

const wording: FailureWording = {
  unavailable: () => errors.unavailable('store_unavailable', 'The store is unavailable; try again shortly'),
  internalMessage: 'Internal error',
}

function answer(err: unknown, w: FailureWording = wording) {
  const e = failureResponse(err, w)
  return { status: e.status, code: e.code, retryAfter: e.headers['retry-after'] }
}

const unavailable = { status: 503, code: 'store_unavailable', retryAfter: '5' }

describe('classifyFailure and failureResponse', () => {
  it.each([
    ['connection refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['connection failure (08006)', pgError('08006', 'connection failure')],
    ['cannot connect now (57P03)', pgError('57P03', 'the database system is starting up')],
    ['server terminated the session (57P01)', pgError('57P01', 'terminating connection due to administrator command')],
    ['statement timeout (57014)', pgError('57014', 'canceling statement due to statement timeout')],
    ['pool connection timeout', new Error('timeout exceeded when trying to connect')],
    ['client connection timeout', new Error('timeout expired')],
    ['connection terminated', new Error('Connection terminated unexpectedly')],
    ['a deadline', new DeadlineExceeded('authentication', 2000)],
    ['Redis offline', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['Redis command timeout', new Error('Command timed out')],
    ['replay cache unavailable', Object.assign(new Error('replay cache unavailable: x'), { name: 'ReplayCacheUnavailable' })],
  ])('%s is a dependency away: 503 with Retry-After', (_name, err) => {
    expect(classifyFailure(err)).toEqual({ kind: 'unavailable' })
    expect(answer(err)).toEqual(unavailable)
  })

  it('an ApiError is answered as it is', () => {
    const err = errors.forbidden('not_allowed', 'no', { 'www-authenticate': 'Basic' })
    expect(classifyFailure(err)).toEqual({ kind: 'answered', error: err })
    expect(failureResponse(err, wording)).toBe(err)
  })

  it('an ApiError 503 keeps its own code and Retry-After', () => {
    expect(answer(errors.unavailable('replay_cache_unavailable', 'x', 7))).toEqual({ status: 503, code: 'replay_cache_unavailable', retryAfter: '7' })
  })

  it.each([
    ['the core unreachable', new CoreUnreachable(), { status: 503, code: 'upstream_unavailable', retryAfter: '5' }],
    ['the forms in flight full', new FormBytesBusy(), { status: 503, code: 'service_unavailable', retryAfter: '2' }],
    ['the uploads in flight full', new UploadsBusy(3), { status: 503, code: 'uploads_busy', retryAfter: '3' }],
    ['the store not ready', new StoreNotReady(), { status: 503, code: 'store_unavailable', retryAfter: '1' }],
  ])('%s, a named failure, is a 503 with its own code, words and Retry-After, whatever the area', (_name, err, expected) => {
    expect(classifyFailure(err)).toEqual({ kind: 'unavailable', named: err })
    expect(answer(err)).toEqual(expected)
    expect(failureResponse(err, wording).message).toBe(err.message)
  })

  it('a named failure a body stream failed with stays a 503, though Fastify marks it a 400', () => {
    const err = Object.assign(new FormBytesBusy(), { statusCode: 400 })
    expect(err).toBeInstanceOf(Unavailable)
    expect(answer(err)).toEqual({ status: 503, code: 'service_unavailable', retryAfter: '2' })
  })

  it("a framework 4xx is the request's fault: its status, bad_request unless the app words it", () => {
    const tooLarge = Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' })
    expect(classifyFailure(tooLarge)).toMatchObject({ kind: 'request', status: 413, reason: 'FST_ERR_CTP_BODY_TOO_LARGE', validation: false })
    expect(answer(tooLarge)).toEqual({ status: 413, code: 'bad_request', retryAfter: undefined })
    const worded: FailureWording = { ...wording, request: (f) => (f.status === 413 ? errors.tooLarge('body_too_large', 'too large') : undefined) }
    expect(answer(tooLarge, worded)).toEqual({ status: 413, code: 'body_too_large', retryAfter: undefined })
  })

  it('a failed schema validation is a request failure marked as such', () => {
    const err = Object.assign(new Error('querystring/count must be integer'), { statusCode: 400, code: 'FST_ERR_VALIDATION', validation: [{}] })
    expect(classifyFailure(err)).toMatchObject({ kind: 'request', status: 400, validation: true })
  })

  it('a URL that cannot be decoded is a 400', () => {
    let err: unknown
    try {
      decodeURIComponent('%E0%A4%A')
    } catch (e) {
      err = e
    }
    expect(classifyFailure(err)).toMatchObject({ kind: 'request', status: 400, reason: 'URIError' })
    expect(answer(err)).toEqual({ status: 400, code: 'bad_request', retryAfter: undefined })
  })

  it.each([
    ['a unique violation (23505)', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a programming error', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a thrown string', 'boom'],
    ['null', null],
  ])('%s is a fault: 500 internal_error, detail hidden', (_name, err) => {
    expect(classifyFailure(err)).toEqual({ kind: 'fault' })
    const e = failureResponse(err, wording)
    expect({ status: e.status, code: e.code, message: e.message, headers: e.headers }).toEqual({ status: 500, code: 'internal_error', message: 'Internal error', headers: {} })
  })

  it.each(['ReplayCacheUnavailable', 'ThrottleUnavailable', 'MailUnavailable', 'DeadlineExceeded'])('a %s is a dependency away: 503', (name) => {
    expect(answer(Object.assign(new Error('x'), { name }))).toEqual(unavailable)
  })

  it('the catalogue holds each code once, in snake_case', () => {
    expect(new Set(errorCodes).size).toBe(errorCodes.length)
    for (const code of errorCodes) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/)
    expect(new ApiError(404, 'not_found', 'x').code).toBe('not_found')
  })
})
