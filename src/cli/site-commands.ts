// `kigo sites …`: the login API's sites on the operator API (docs/login-api.md#operators).
import type { ApiResult } from './admin-client.js'
import { overlapBody, type Command } from './command.js'
import { formatRecord, formatTable, type Field } from './output.js'

const seg = encodeURIComponent
const record = (result: ApiResult) => () => formatRecord(result.json as Record<string, Field>)

export const siteCommands: Command[] = [
  {
    group: 'sites',
    action: 'add',
    args: ['name'],
    options: { owner: { value: 'ID', required: true }, callback: { value: 'URL', required: true } },
    summary: 'register a login API site; prints its api_key and secret (the secret only now)',
    examples: ['kigo sites add "Alice\'s blog" --owner alice --callback https://blog.example/login/callback'],
    async run(client, { args, values }) {
      const result = await client.request('POST', '/admin/sites', { name: args[0]!, owner: values.owner, callback: values.callback })
      return { result, text: record(result) }
    },
  },
  {
    group: 'sites',
    action: 'list',
    args: [],
    options: { owner: { value: 'ID' } },
    summary: 'list login API sites (without secrets)',
    examples: ['kigo sites list', 'kigo sites list --owner alice --json'],
    async run(client, { values }) {
      const result = await client.request('GET', `/admin/sites${values.owner === undefined ? '' : `?owner=${seg(values.owner)}`}`)
      const rows = (result.json as { sites: Array<Record<string, Field>> }).sites
      return { result, text: () => formatTable(rows, ['api_key', 'name', 'owner', 'callback', 'created_at'], 'no login sites') }
    },
  },
  {
    group: 'sites',
    action: 'show',
    args: ['api_key'],
    options: {},
    summary: 'show one login API site (without its secret)',
    examples: ['kigo sites show API_KEY'],
    async run(client, { args }) {
      const result = await client.request('GET', `/admin/sites/${seg(args[0]!)}`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'sites',
    action: 'rotate-secret',
    args: ['api_key'],
    options: { overlap: { value: '0|3600|86400|604800' } },
    summary: "generate a new secret for a login API site; the old one keeps working a day, or --overlap seconds (0: it stops at once)",
    examples: ['kigo sites rotate-secret API_KEY --json', 'kigo sites rotate-secret API_KEY --overlap 86400'],
    async run(client, { args, values }) {
      const result = await client.request('POST', `/admin/sites/${seg(args[0]!)}/rotate-secret`, overlapBody(values.overlap))
      return { result, text: record(result) }
    },
  },
  {
    group: 'sites',
    action: 'delete',
    args: ['api_key'],
    options: {},
    summary: 'delete a login API site; its api_key and outstanding certs stop working at once',
    examples: ['kigo sites delete API_KEY'],
    async run(client, { args }) {
      const result = await client.request('DELETE', `/admin/sites/${seg(args[0]!)}`)
      return { result, text: record(result) }
    },
  },
]
