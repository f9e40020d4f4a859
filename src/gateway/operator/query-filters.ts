// The filters of the operator API's lists (usage report, audit trail, notices): the pieces
// of their routes' querystring schemas (an object of optional filters, no other
// parameter), checked by the operator API's validator (registrations/route-schemas.ts):
// each parameter at most once (twice is a list, not a string), and a 400
// `invalid_parameter` that names the parameter and what it must be.
import { ApiError } from '../../common/errors.js'
import { Type } from '../../common/typebox.js'
import { userIdPattern } from '../domain/identifiers.js'
import { InvalidPolicy, parseInstant } from '../policy/normalize.js'
import { Instant } from '../policy/types.js'

export const badQuery = (message: string) => new ApiError(400, 'invalid_parameter', `Invalid query: ${message}`)

/** One of `values` (`must` says so in the 400, by default "one of a, b, c"); a parameter given twice (a list) is "must be a string". */
export const oneOf = <T extends string>(values: readonly T[], must?: string) =>
  Type.Intersect([Type.String(), Type.Enum([...values], must === undefined ? {} : { errorMessage: `must be ${must}` })])

/** A text of 1 to `maxLength` characters. */
export const text = (maxLength: number) => Type.String({ minLength: 1, maxLength })

export const userId = Type.String({ pattern: userIdPattern.source, errorMessage: 'must be a user ID' })

/** An ISO 8601 instant (queryInstant reads it). */
export const instant = Instant

/** A whole number from 1 to `max`, a power of ten or one less (queryCount reads it). */
export function count(max: number) {
  const digits = String(max).length
  const upTo = (n: number) => `[1-9][0-9]{0,${n - 1}}`
  const pattern = /^9+$/.test(String(max)) ? upTo(digits) : /^10*$/.test(String(max)) ? `${upTo(digits - 1)}|${max}` : null
  if (pattern === null) throw new Error(`count(${max}): the limit must be a power of ten or one less`)
  return Type.String({ pattern: `^(?:${pattern})$`, errorMessage: `must be a whole number from 1 to ${max}` })
}

/** `true` or `false`. */
export const flag = oneOf(['true', 'false'], 'true or false')

/** A checked count's value. */
export const queryCount = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value))

/** A checked instant as milliseconds since the epoch; 400 naming `name` for a date that does not exist (2027-02-30). */
export function queryInstant(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  try {
    return parseInstant(value, name)
  } catch (err) {
    if (err instanceof InvalidPolicy) throw badQuery(err.message)
    throw err
  }
}
