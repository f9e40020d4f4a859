// The OpenID Connect commands of `kigo` (docs/oidc.md#by-the-operator): relying parties
// (`kigo oidc-clients …`) and the signing key (`kigo oidc rotate-key`), through the
// operator API's /admin/oidc-clients and /admin/oidc/rotate-key.
import type { ApiResult } from './admin-client.js'
import type { Command } from './command.js'
import { registrationCommands } from './registration-commands.js'
import { formatRecord, type Field } from './output.js'

const record = (result: ApiResult) => () => formatRecord(result.json as Record<string, Field>)

export const oidcCommands: Command[] = [
  ...registrationCommands({
    group: 'oidc-clients',
    path: '/admin/oidc-clients',
    id: 'client_id',
    listed: 'clients',
    columns: ['client_id', 'name', 'owner', 'type', 'redirect_uris', 'created_at'],
    none: 'no OpenID Connect clients',
    add: {
      options: { owner: { value: 'ID', required: true }, 'redirect-uri': { value: 'URL', required: true }, 'post-logout-redirect-uri': { value: 'URL' } },
      flags: { public: 'a public client (an app on a device or in a browser): no secret, PKCE alone' },
      summary: 'register a site that signs people in with OpenID Connect; prints its client_id and, when confidential, its client_secret (shown once)',
      examples: [
        'kigo oidc-clients add "Tea Party" --owner alice --redirect-uri https://tea.example/callback',
        'kigo oidc-clients add "Tea Party app" --owner alice --redirect-uri http://127.0.0.1:8765/callback --public --json',
      ],
      body({ args, values, flags }) {
        const body: Record<string, unknown> = { name: args[0]!, owner: values.owner, redirect_uris: [values['redirect-uri']] }
        if (values['post-logout-redirect-uri'] !== undefined) body.post_logout_redirect_uris = [values['post-logout-redirect-uri']]
        if (flags?.has('public')) body.public = true
        return body
      },
    },
    summaries: {
      list: 'list the registered OpenID Connect clients (without secrets)',
      show: 'show one OpenID Connect client (without its secret)',
      rotate: "generate a new client secret (shown once); the old one keeps working a day, or --overlap seconds (0: it stops at once); the users' grants stay",
      delete: 'delete an OpenID Connect client with every grant and token it holds; signing in there stops at once',
    },
    exampleOverlap: 86400,
  }),
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
