// Operator locks on users (src/gateway/throttle/user-locks.ts) in the gateway's schema:
// version 34, applied in the gateway schema's order (src/gateway/schema.ts). Never edit one
// that has shipped.
import type { Migration } from '../../common/sql.js'

export const throttleMigrations: Migration[] = [
  {
    version: 34,
    name: 'operator locks on users',
    sql: `
-- A user an operator locked out (kigo users lock, src/gateway/throttle/user-locks.ts): their
-- passwords (Basic, WSSE, account sign-in) are refused from every address until the row
-- is deleted (kigo users unlock). Every gateway polls this table.
CREATE TABLE kigo_gateway.user_locks (
  user_id text PRIMARY KEY REFERENCES kigo_gateway.users (id),
  locked_at timestamptz NOT NULL,
  reason text NOT NULL
);
`,
  },
]
