// How the operator API checks a request against its route schema (TypeBox), in every area
// of it (users and applications, policy, notices, login sites, OpenID Connect clients): no
// type coercion, no silently dropped field, and a 400 `invalid_parameter` whose message
// names the field.
import type { FastifySchemaCompiler } from 'fastify'
import { ApiError } from '../../common/errors.js'
import { Compile, type TSchema } from '../../common/typebox.js'

interface SchemaError {
  keyword: string
  instancePath: string
  schemaPath: string
  params: Record<string, unknown>
  message: string
}

const partNames: Record<string, string> = { body: 'request body', querystring: 'query', params: 'path', headers: 'headers' }

/** The schema node a schemaPath (`#/properties/x/items`) points at. */
function nodeAt(schema: unknown, schemaPath: string): Record<string, unknown> | undefined {
  let node = schema
  for (const key of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>) : undefined
}

/** One sentence for the first meaningful schema error, naming the field. */
export function describeSchemaError(errors: SchemaError[], part: string, schema: unknown): string {
  // `additionalProperties: false` reports a "schema is false" error beside the useful one.
  const error = errors.find((e) => e.keyword !== 'boolean') ?? errors[0]
  const where = partNames[part] ?? part
  if (!error) return `Invalid ${where}`
  const field = error.instancePath.slice(1).replace(/\/([0-9]+)(?=\/|$)/g, '[$1]').replaceAll('/', '.')
  const p = error.params
  switch (error.keyword) {
    case 'required': {
      const name = (p.requiredProperties as string[] | undefined)?.[0] ?? '?'
      return `Invalid ${where}: "${field === '' ? name : `${field}.${name}`}" is required`
    }
    case 'additionalProperties': {
      const name = (p.additionalProperties as string[] | undefined)?.[0] ?? '?'
      // A query's parameters are few: say which there are.
      const known = part === 'querystring' ? Object.keys(nodeAt(schema, error.schemaPath.replace(/\/additionalProperties$/, ''))?.properties ?? {}) : []
      return `Invalid ${where}: unknown ${part === 'body' ? 'field' : 'parameter'} "${name}"${known.length > 0 ? ` (use ${known.join(', ')})` : ''}`
    }
  }
  let what: string
  switch (error.keyword) {
    case 'type':
      what = field === '' && part === 'body' ? 'must be a JSON object' : `must be ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}`
      break
    case 'enum': {
      const custom = nodeAt(schema, error.schemaPath)?.errorMessage
      what = typeof custom === 'string' ? custom : `must be one of ${(p.allowedValues as unknown[]).join(', ')}`
      break
    }
    case 'minLength':
      what = p.limit === 1 ? 'must not be empty' : `must have at least ${String(p.limit)} characters`
      break
    case 'maxLength':
      what = `must have at most ${String(p.limit)} characters`
      break
    case 'minItems':
      what = `must list at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`
      break
    case 'maxItems':
      what = `must list at most ${String(p.limit)} items`
      break
    default: {
      const custom = nodeAt(schema, error.schemaPath)?.errorMessage
      what = typeof custom === 'string' ? custom : error.message
    }
  }
  // A union (`callback`: string or null) reports each branch; name the useful one.
  if (error.keyword === 'anyOf' || error.keyword === 'const') what = 'has an invalid value'
  return `Invalid ${where}: ${field === '' ? 'value' : `"${field}"`} ${what}`
}

/**
 * TypeBox's compiled checker as the route validator: no type coercion and no silently
 * dropped fields (every input here is a string or a list of strings already), and a 400
 * naming the field on failure.
 */
export const strictValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema)
  return (value: unknown) => {
    if (check.Check(value)) return { value }
    const message = describeSchemaError(check.Errors(value), httpPart ?? 'body', schema)
    return { error: new ApiError(400, 'invalid_parameter', message) }
  }
}
