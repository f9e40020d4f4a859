// The operator API's list filters (usage report, audit trail): what each kind accepts, and
// the 400 that names the parameter for everything else.
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../src/common/errors.js'
import { queryFilters } from '../../../src/gateway/operator/query-filters.js'

const refusal = (fn: () => unknown): { status: number; code: string; message: string } => {
  try {
    fn()
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message }
    throw err
  }
  throw new Error('not refused')
}

describe('operator list filters', () => {
  it('reads each kind of filter', () => {
    const f = queryFilters({ kind: 'user', target: 'alice', user: 'bob_1', since: '2027-01-31T00:00:00Z', limit: '250' }, ['kind', 'target', 'user', 'since', 'limit', 'absent'])
    expect(f.oneOf('kind', ['policy', 'user'])).toBe('user')
    expect(f.text('target', 256)).toBe('alice')
    expect(f.userId('user')).toBe('bob_1')
    expect(f.instant('since')).toBe(Date.UTC(2027, 0, 31))
    expect(f.count('limit', 1000)).toBe(250)
    expect(f.one('absent')).toBeUndefined()
    expect(f.count('absent', 1000)).toBeUndefined()
  })

  it('refuses with a 400 naming the parameter', () => {
    const invalid = { status: 400, code: 'invalid_parameter' }
    expect(refusal(() => queryFilters({ sort: 'x' }, ['kind', 'limit']))).toEqual({ ...invalid, message: 'Invalid query: unknown parameter "sort" (use kind, limit)' })
    expect(refusal(() => queryFilters({ kind: ['a', 'b'] }, ['kind']).one('kind'))).toMatchObject({ ...invalid, message: 'Invalid query: "kind" may be given once' })
    expect(refusal(() => queryFilters({ kind: 'x' }, ['kind']).oneOf('kind', ['policy', 'user']))).toMatchObject({ message: 'Invalid query: "kind" must be one of policy, user' })
    expect(refusal(() => queryFilters({ order: 'up' }, ['order']).oneOf('order', ['asc', 'desc'], 'asc or desc'))).toMatchObject({ message: 'Invalid query: "order" must be asc or desc' })
    expect(refusal(() => queryFilters({ target: '' }, ['target']).text('target', 256))).toMatchObject({ message: 'Invalid query: "target" must have 1 to 256 characters' })
    expect(refusal(() => queryFilters({ user: '1x' }, ['user']).userId('user'))).toMatchObject({ message: 'Invalid query: "user" must be a user ID' })
    expect(refusal(() => queryFilters({ since: 'yesterday' }, ['since']).instant('since'))).toMatchObject({ ...invalid })
    for (const limit of ['0', '1001', '01', '1e3', '99999999999']) {
      expect(refusal(() => queryFilters({ limit }, ['limit']).count('limit', 1000)), limit).toMatchObject({ message: 'Invalid query: "limit" must be a whole number from 1 to 1000' })
    }
  })
})
