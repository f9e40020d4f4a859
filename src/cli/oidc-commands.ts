// The OpenID Connect commands of `kigo` (docs/oidc.md#by-the-operator): relying parties
// (`kigo oidc-clients …`) and the signing key (`kigo oidc rotate-key`), through the
// operator API's /admin/oidc-clients and /admin/oidc/rotate-key.
import type { ApiResult } from './admin-client.js'
import { overlapBody, type Command } from './command.js'
import { formatRecord, formatTable, type Field } from './output.js'

const seg = encodeURIComponent
const record = (result: ApiResult) => () => formatRecord(result.json as Record<string, Field>)

export const oidcCommands: Command[] = [
  {
    group: 'oidc-clients',
    action: 'add',
    args: ['name'],
    options: { owner: { value: 'ID', required: true }, 'redirect-uri': { value: 'URL', required: true }, 'post-logout-redirect-uri': { value: 'URL' } },
    flags: { public: 'a public client (an app on a device or in a browser): no secret, PKCE alone' },
    summary: 'register a site that signs people in with OpenID Connect; prints its client_id and, when confidential, its client_secret (shown once)',
    examples: [
      'kigo oidc-clients add "Tea Party" --owner alice --redirect-uri https://tea.example/callback',
      'kigo oidc-clients add "Tea Party app" --owner alice --redirect-uri http://127.0.0.1:8765/callback --public --json',
    ],
    async run(client, { args, values, flags }) {
      const body: Record<string, unknown> = { name: args[0]!, owner: values.owner, redirect_uris: [values['redirect-uri']] }
      if (values['post-logout-redirect-uri'] !== undefined) body.post_logout_redirect_uris = [values['post-logout-redirect-uri']]
      if (flags?.has('public')) body.public = true
      const result = await client.request('POST', '/admin/oidc-clients', body)
      return { result, text: record(result) }
    },
  },
  {
    group: 'oidc-clients',
    action: 'list',
    args: [],
    options: { owner: { value: 'ID' } },
    summary: 'list the registered OpenID Connect clients (without secrets)',
    examples: ['kigo oidc-clients list', 'kigo oidc-clients list --owner alice --json'],
    async run(client, { values }) {
      const result = await client.request('GET', `/admin/oidc-clients${values.owner === undefined ? '' : `?owner=${seg(values.owner)}`}`)
      const rows = (result.json as { clients: Array<Record<string, Field>> }).clients
      return { result, text: () => formatTable(rows, ['client_id', 'name', 'owner', 'type', 'redirect_uris', 'created_at'], 'no OpenID Connect clients') }
    },
  },
  {
    group: 'oidc-clients',
    action: 'show',
    args: ['client_id'],
    options: {},
    summary: 'show one OpenID Connect client (without its secret)',
    examples: ['kigo oidc-clients show CLIENT_ID'],
    async run(client, { args }) {
      const result = await client.request('GET', `/admin/oidc-clients/${seg(args[0]!)}`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'oidc-clients',
    action: 'rotate-secret',
    args: ['client_id'],
    options: { overlap: { value: '0|3600|86400|604800' } },
    summary: "generate a new client secret (shown once); the old one keeps working a day, or --overlap seconds (0: it stops at once); the users' grants stay",
    examples: ['kigo oidc-clients rotate-secret CLIENT_ID --json', 'kigo oidc-clients rotate-secret CLIENT_ID --overlap 86400'],
    async run(client, { args, values }) {
      const result = await client.request('POST', `/admin/oidc-clients/${seg(args[0]!)}/rotate-secret`, overlapBody(values.overlap))
      return { result, text: record(result) }
    },
  },
  {
    group: 'oidc-clients',
    action: 'delete',
    args: ['client_id'],
    options: {},
    summary: 'delete an OpenID Connect client with every grant and token it holds; signing in there stops at once',
    examples: ['kigo oidc-clients delete CLIENT_ID'],
    async run(client, { args }) {
      const result = await client.request('DELETE', `/admin/oidc-clients/${seg(args[0]!)}`)
      return { result, text: record(result) }
    },
  },
  {
    group: 'oidc',
    action: 'rotate-key',
    args: [],
    options: {},
    summary: 'generate a new ID token signing key; the old one stays in the JWKS until the tokens it signed have expired',
    examples: ['kigo oidc rotate-key', 'kigo oidc rotate-key --json'],
    async run(client) {
      const result = await client.request('POST', '/admin/oidc/rotate-key')
      return { result, text: record(result) }
    },
  },
]
