// The audit trail's table (docs/operations.md#stored-data) in the gateway's schema: version 30,
// applied in the gateway schema's order (src/gateway/schema.ts). Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const auditMigrations: Migration[] = [
  {
    version: 30,
    name: 'audit trail of operator changes',
    sql: `
-- Every change made through the operator API (policy, users, applications, tokens): when,
-- what, the state before and after (never a secret), and the address it came from
-- (src/gateway/audit/store.ts). Append-only; read newest first.
CREATE TABLE kigo_gateway.audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  address text NOT NULL,
  action text NOT NULL,
  kind text NOT NULL,
  target text NOT NULL,
  before jsonb,
  after jsonb
);

CREATE INDEX audit_log_kind ON kigo_gateway.audit_log (kind, id);
`,
  },
]
