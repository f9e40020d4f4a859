// `kigo admin sessions revoke` and `kigo users lock|unlock` (docs/operations.md#operator-sessions,
// docs/operations.md#user-locks): who may sign in, over POST /admin/sessions/revoke and
// PUT/DELETE /admin/users/{id}/lock. Each change is recorded in the audit trail.
import type { AdminClient } from './admin-client.js'
import type { Command } from './command.js'
import { formatRecord, type Field } from './output.js'

const seg = encodeURIComponent

export const accessCommands: Command[] = [
  {
    group: 'admin',
    action: 'sessions revoke',
    args: [],
    options: {},
    summary: 'end every operator dashboard session at every gateway; browsers must sign in again (the admin token keeps working)',
    examples: ['kigo admin sessions revoke', 'kigo admin sessions revoke --json'],
    async run(client: AdminClient) {
      const result = await client.request('POST', '/admin/sessions/revoke')
      const n = (result.json as { revoked: number }).revoked
      return { result, text: () => `revoked ${n} dashboard session${n === 1 ? '' : 's'}\n` }
    },
  },
  {
    group: 'users',
    action: 'lock',
    args: ['id'],
    options: { reason: { value: 'TEXT' } },
    summary: "refuse a user's passwords (Basic, WSSE, account sign-in) from every address until unlocked; OAuth tokens keep working",
    examples: ['kigo users lock alice --reason "password guessing from many networks"', 'kigo users lock alice --json'],
    async run(client, { args, values }) {
      const result = await client.request('PUT', `/admin/users/${seg(args[0]!)}/lock`, values.reason === undefined ? {} : { reason: values.reason })
      return { result, text: () => formatRecord(result.json as Record<string, Field>) }
    },
  },
  {
    group: 'users',
    action: 'unlock',
    args: ['id'],
    options: {},
    summary: "lift an operator's lock on a user; their passwords are accepted again",
    examples: ['kigo users unlock alice'],
    async run(client, { args }) {
      const result = await client.request('DELETE', `/admin/users/${seg(args[0]!)}/lock`)
      return { result, text: () => formatRecord(result.json as Record<string, Field>) }
    },
  },
]
