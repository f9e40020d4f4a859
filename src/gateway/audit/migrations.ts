// The audit trail's table (docs/operations.md#stored-data) in the gateway's schema: versions 30 and 36,
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
  {
    version: 36,
    name: 'who made each audited change',
    sql: `
-- The actor of each change (src/gateway/audit/audited.ts): 'operator', or 'user:ID' for a
-- user's change on their own account pages. Earlier rows are named from what they carried:
-- the user of an account.* change (its values' user, else its target), and the "by" of a
-- user's login-site or OpenID Connect client change.
ALTER TABLE kigo_gateway.audit_log ADD COLUMN actor text NOT NULL DEFAULT 'operator';
UPDATE kigo_gateway.audit_log SET actor = 'user:' || COALESCE(after->>'user', before->>'user', target) WHERE action LIKE 'account.%';
UPDATE kigo_gateway.audit_log SET actor = 'user:' || (after->>'by') WHERE action NOT LIKE 'account.%' AND jsonb_typeof(after) = 'object' AND after->>'by' IS NOT NULL;
`,
  },
]
