// `kigo admin sessions revoke` (docs/operations.md#operator-sessions): who may sign in,
// over POST /admin/sessions/revoke. Each change is recorded in the audit trail.
import type { AdminClient } from './admin-client.js'
import type { Command } from './command.js'

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
]
