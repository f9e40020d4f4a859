// `kigo sites …`: the login API's sites on the operator API (docs/login-api.md#operators).
import { registrationCommands } from './registration-commands.js'

export const siteCommands = registrationCommands({
  group: 'sites',
  path: '/admin/sites',
  id: 'api_key',
  listed: 'sites',
  columns: ['api_key', 'name', 'owner', 'callback', 'created_at'],
  none: 'no login sites',
  add: {
    options: { owner: { value: 'ID', required: true }, callback: { value: 'URL', required: true } },
    summary: 'register a login API site; prints its api_key and secret (the secret only now)',
    examples: ['kigo sites add "Alice\'s blog" --owner alice --callback https://blog.example/login/callback'],
    body: ({ args, values }) => ({ name: args[0]!, owner: values.owner, callback: values.callback }),
  },
  summaries: {
    list: 'list login API sites (without secrets)',
    show: 'show one login API site (without its secret)',
    rotate: 'generate a new secret for a login API site; the old one keeps working a day, or --overlap seconds (0: it stops at once)',
    delete: 'delete a login API site; its api_key and outstanding certs stop working at once',
  },
  exampleOverlap: 86400,
})
