// The `kigo` commands of a registered client with a rotating secret (an OAuth application,
// a login site, an OpenID Connect client; docs/gateway.md#rotating-a-secret): add, list,
// show, rotate-secret and delete, through the operator API's collection of that kind. Each
// kind gives only its group, collection, id, fields and words.
import type { AdminClient, ApiResult } from './admin-client.js'
import { overlapBody, type Command, type OptionSpec, type Parsed } from './command.js'
import { formatRecord, formatTable, type Field } from './output.js'

const seg = encodeURIComponent
const record = (result: ApiResult) => () => formatRecord(result.json as Record<string, Field>)

export interface RegistrationCommands {
  /** The command group (`apps`) and the operator API's collection (`/admin/apps`). */
  group: string
  path: string
  /** The id's name in usage and in the list (`consumer_key`). */
  id: string
  /** The list's property in the answer (`apps`) and its columns. */
  listed: string
  columns: string[]
  /** What an empty list prints. */
  none: string
  add: {
    options: Record<string, OptionSpec>
    flags?: Record<string, string>
    summary: string
    examples: string[]
    /** The registration's body from the command line (a usage error refuses it before anything is sent). */
    body(input: Parsed): Record<string, unknown>
    /** What the kind does once registered, answering in the registration's place; none: the registration's answer. */
    after?(client: AdminClient, input: Parsed, registered: ApiResult): Promise<{ result: ApiResult; text: () => string } | null>
  }
  summaries: { list: string; show: string; rotate: string; delete: string }
  /** An overlap for the rotate-secret example (seconds). */
  exampleOverlap: number
}

/** The five commands of one kind. */
export function registrationCommands(k: RegistrationCommands): Command[] {
  const ID = k.id.toUpperCase()
  const one = (args: string[]) => `${k.path}/${seg(args[0]!)}`
  return [
    {
      group: k.group,
      action: 'add',
      args: ['name'],
      options: k.add.options,
      ...(k.add.flags ? { flags: k.add.flags } : {}),
      summary: k.add.summary,
      examples: k.add.examples,
      async run(client, input) {
        const result = await client.request('POST', k.path, k.add.body(input))
        return (await k.add.after?.(client, input, result)) ?? { result, text: record(result) }
      },
    },
    {
      group: k.group,
      action: 'list',
      args: [],
      options: { owner: { value: 'ID' } },
      summary: k.summaries.list,
      examples: [`kigo ${k.group} list`, `kigo ${k.group} list --owner alice --json`],
      async run(client, { values }) {
        const result = await client.request('GET', `${k.path}${values.owner === undefined ? '' : `?owner=${seg(values.owner)}`}`)
        const rows = (result.json as Record<string, Array<Record<string, Field>>>)[k.listed]!
        return { result, text: () => formatTable(rows, k.columns, k.none) }
      },
    },
    {
      group: k.group,
      action: 'show',
      args: [k.id],
      options: {},
      summary: k.summaries.show,
      examples: [`kigo ${k.group} show ${ID}`],
      async run(client, { args }) {
        const result = await client.request('GET', one(args))
        return { result, text: record(result) }
      },
    },
    {
      group: k.group,
      action: 'rotate-secret',
      args: [k.id],
      options: { overlap: { value: '0|3600|86400|604800' } },
      summary: k.summaries.rotate,
      examples: [`kigo ${k.group} rotate-secret ${ID} --json`, `kigo ${k.group} rotate-secret ${ID} --overlap ${k.exampleOverlap}`],
      async run(client, { args, values }) {
        const result = await client.request('POST', `${one(args)}/rotate-secret`, overlapBody(values.overlap))
        return { result, text: record(result) }
      },
    },
    {
      group: k.group,
      action: 'delete',
      args: [k.id],
      options: {},
      summary: k.summaries.delete,
      examples: [`kigo ${k.group} delete ${ID}`],
      async run(client, { args }) {
        const result = await client.request('DELETE', one(args))
        return { result, text: record(result) }
      },
    },
  ]
}
