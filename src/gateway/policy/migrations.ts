// The migration policy's table (docs/gateway.md#the-migration-policy) in the gateway's
// schema: versions 10 to 19 are the policy's and the usage report's (10 here), applied in
// the gateway schema's order (src/gateway/schema.ts). Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const policyMigrations: Migration[] = [
  {
    version: 10,
    name: 'migration policy per legacy method',
    sql: `
-- One row per legacy method (basic, wsse): the policy as normalized JSON
-- (src/gateway/policy/types.ts). No row: allow. Every gateway polls this table.
CREATE TABLE kigo_gateway.auth_policy (
  method text PRIMARY KEY CHECK (method IN ('basic', 'wsse')),
  policy jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
]
