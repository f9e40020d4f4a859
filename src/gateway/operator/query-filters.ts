// The filters of the operator API's lists (usage report, audit trail) read from a query
// string the same way: only the listed parameters, each at most once, and a 400 in
// `invalid_parameter` that names the parameter and what it must be.
import { ApiError } from '../../common/errors.js'
import { userIdPattern } from '../domain/identifiers.js'
import { InvalidPolicy, parseInstant } from '../policy/normalize.js'
import { instantPattern } from '../policy/types.js'

export const badQuery = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid query: ${message}`)

const instant = new RegExp(instantPattern)

export interface QueryFilters {
  /** The parameter's value, undefined when absent; 400 when given twice. */
  one(name: string): string | undefined
  /** One of `values` (`must` says so in the 400, by default "one of a, b, c"). */
  oneOf<T extends string>(name: string, values: readonly T[], must?: string): T | undefined
  /** A text of 1 to `maxLength` characters. */
  text(name: string, maxLength: number): string | undefined
  /** A user ID. */
  userId(name: string): string | undefined
  /** An ISO 8601 instant, as milliseconds since the epoch. */
  instant(name: string): number | undefined
  /** A whole number from 1 to `max`. */
  count(name: string, max: number): number | undefined
}

/** Reads `query`, refusing any parameter not in `allowed` (the message lists them). */
export function queryFilters(query: Record<string, unknown>, allowed: readonly string[]): QueryFilters {
  for (const key of Object.keys(query)) if (!allowed.includes(key)) throw badQuery(`unknown parameter "${key}" (use ${allowed.join(', ')})`)
  const one = (name: string): string | undefined => {
    const v = query[name]
    if (v === undefined) return undefined
    if (typeof v !== 'string') throw badQuery(`"${name}" may be given once`)
    return v
  }
  return {
    one,
    oneOf<T extends string>(name: string, values: readonly T[], must = `one of ${values.join(', ')}`): T | undefined {
      const v = one(name)
      if (v !== undefined && !(values as readonly string[]).includes(v)) throw badQuery(`"${name}" must be ${must}`)
      return v as T | undefined
    },
    text(name, maxLength) {
      const v = one(name)
      if (v !== undefined && (v === '' || v.length > maxLength)) throw badQuery(`"${name}" must have 1 to ${maxLength} characters`)
      return v
    },
    userId(name) {
      const v = one(name)
      if (v !== undefined && !userIdPattern.test(v)) throw badQuery(`"${name}" must be a user ID`)
      return v
    },
    instant(name) {
      const v = one(name)
      if (v === undefined) return undefined
      if (!instant.test(v)) throw badQuery(`"${name}" must be an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T00:00:00Z`)
      try {
        return parseInstant(v, name)
      } catch (err) {
        if (err instanceof InvalidPolicy) throw badQuery(err.message)
        throw err
      }
    },
    count(name, max) {
      const v = one(name)
      if (v === undefined) return undefined
      if (!/^[1-9][0-9]*$/.test(v) || v.length > String(max).length || Number(v) > max) throw badQuery(`"${name}" must be a whole number from 1 to ${max}`)
      return Number(v)
    },
  }
}
