// The operator API's list filters (usage report, audit trail, notices) as their routes'
// querystring schemas: what each kind accepts, and the 400 that names the parameter for
// everything else.
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../src/common/errors.js'
import { Type, type TSchema } from '../../../src/common/typebox.js'
import { count, flag, instant, oneOf, queryCount, queryInstant, text, userId } from '../../../src/gateway/operator/query-filters.js'
import { strictValidatorCompiler } from '../../../src/gateway/registrations/route-schemas.js'

const Query = Type.Object({
  kind: Type.Optional(oneOf(['policy', 'user'])),
  order: Type.Optional(oneOf(['asc', 'desc'], 'asc or desc')),
  target: Type.Optional(text(256)),
  user: Type.Optional(userId),
  since: Type.Optional(instant),
  limit: Type.Optional(count(1000)),
  all: Type.Optional(flag),
}, { additionalProperties: false })

/** The validator's answer to `query`: the value, or the refusal's status, code and message. */
function validate(query: Record<string, unknown>, schema: TSchema = Query): unknown {
  const validator = strictValidatorCompiler({ schema, httpPart: 'querystring', method: 'GET', url: '/admin/list' }) as (value: unknown) => { value?: unknown; error?: Error }
  const { value, error } = validator(query)
  if (error instanceof ApiError) return { status: error.status, code: error.code, message: error.message }
  return value
}

describe('operator list filters', () => {
  it('reads each kind of filter', () => {
    const query = { kind: 'user', target: 'alice', user: 'bob_1', since: '2027-01-31T00:00:00Z', limit: '250', all: 'true' }
    expect(validate(query)).toEqual(query)
    expect(queryInstant(query.since, 'since')).toBe(Date.UTC(2027, 0, 31))
    expect(queryCount(query.limit)).toBe(250)
    expect(queryCount(undefined)).toBeUndefined()
    expect(validate({ limit: '1000' })).toEqual({ limit: '1000' })
    expect(validate({ limit: '99999' }, Type.Object({ limit: count(99_999) }))).toEqual({ limit: '99999' })
  })

  it('refuses with a 400 naming the parameter', () => {
    const invalid = { status: 400, code: 'invalid_parameter' }
    expect(validate({ sort: 'x' })).toEqual({ ...invalid, message: 'Invalid query: unknown parameter "sort" (use kind, order, target, user, since, limit, all)' })
    expect(validate({ kind: ['policy', 'user'] })).toEqual({ ...invalid, message: 'Invalid query: "kind" must be a string' })
    expect(validate({ limit: ['1', '2'] })).toEqual({ ...invalid, message: 'Invalid query: "limit" must be a string' })
    expect(validate({ kind: 'x' })).toMatchObject({ message: 'Invalid query: "kind" must be one of policy, user' })
    expect(validate({ order: 'up' })).toMatchObject({ message: 'Invalid query: "order" must be asc or desc' })
    expect(validate({ all: 'yes' })).toMatchObject({ message: 'Invalid query: "all" must be true or false' })
    expect(validate({ target: '' })).toMatchObject({ message: 'Invalid query: "target" must not be empty' })
    expect(validate({ target: 'x'.repeat(257) })).toMatchObject({ message: 'Invalid query: "target" must have at most 256 characters' })
    expect(validate({ user: '1x' })).toMatchObject({ message: 'Invalid query: "user" must be a user ID' })
    expect(validate({ since: 'yesterday' })).toMatchObject({ ...invalid, message: expect.stringMatching(/^Invalid query: "since" must be an ISO 8601 date-time/) })
    for (const limit of ['0', '1001', '01', '1e3', '99999999999', '']) {
      expect(validate({ limit }), limit).toMatchObject({ message: 'Invalid query: "limit" must be a whole number from 1 to 1000' })
    }
    expect(() => queryInstant('2027-02-30', 'since')).toThrow(expect.objectContaining({ status: 400, code: 'invalid_parameter', message: expect.stringMatching(/^Invalid query: "since" is not a valid date-time/) }))
  })

  it('takes only a power of ten or one less as a count\'s limit', () => {
    expect(() => count(250)).toThrow(/power of ten/)
  })
})
