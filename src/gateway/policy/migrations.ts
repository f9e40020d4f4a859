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

/**
 * The policy table's later changes: applied after the login API's list, whose migration 40
 * last rewrote the table's check (src/gateway/schema.ts keeps that order).
 */
export const policyMethodMigrations: Migration[] = [
  {
    version: 93,
    name: 'OAuth 1.0a (oauth1) under the migration policy',
    sql: `
-- oauth1 governs the requests verified as OAuth 1.0a (credential method oauth); no row: allow.
ALTER TABLE kigo_gateway.auth_policy DROP CONSTRAINT auth_policy_method_check;
ALTER TABLE kigo_gateway.auth_policy ADD CONSTRAINT auth_policy_method_check CHECK (method IN ('basic', 'wsse', 'login_api', 'oauth1'));
`,
  },
]
