// The operator dashboard's sessions in the gateway's schema: version 33, applied in the
// gateway schema's order (src/gateway/schema.ts). Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const operatorMigrations: Migration[] = [
  {
    version: 33,
    name: 'operator dashboard sessions',
    sql: `
-- Signed-in dashboard browsers (src/gateway/operator/session-store.ts). The cookie holds a
-- random token; only its SHA-256 is kept here. binding is an HMAC of the admin token in
-- force when the session began, keyed from KIGO_SECRET_KEY: a gateway whose admin token
-- differs accepts none of them. Rows end at sign-out, at kigo admin sessions revoke, or
-- at expiry.
CREATE TABLE kigo_gateway.operator_sessions (
  id_hash text PRIMARY KEY,
  binding text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE INDEX operator_sessions_expiry ON kigo_gateway.operator_sessions (expires_at);
`,
  },
]
