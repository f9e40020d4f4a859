// OAuth 2.0's tables (docs/oauth2.md#operating-it), version 110 of the gateway
// schema's migrations, applied in the gateway schema's order (src/gateway/schema.ts).
import type { Migration } from '../../common/sql.js'

export const oauth2Migrations: Migration[] = [
  {
    version: 110,
    name: 'OAuth 2.0: revoked grants, the API scopes an OpenID Connect client may ask for',
    sql: `
-- Grants revoked while access tokens issued under them may still be unexpired. Every
-- gateway keeps the unexpired rows in memory and checks each Bearer token against them
-- (src/gateway/oauth2/revocations.ts); a row is useless once expires_at has passed.
CREATE TABLE kigo_gateway.oauth2_revocations (
  grant_id text PRIMARY KEY,
  revoked_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE INDEX oauth2_revocations_revoked ON kigo_gateway.oauth2_revocations (revoked_at);

-- The API scopes (read_public, write_public, read_private, write_private) a client may be
-- granted for the API resource; none for a client that only signs people in.
ALTER TABLE kigo_gateway.oidc_clients ADD COLUMN api_scopes text[] NOT NULL DEFAULT '{}';

-- A device code is found by the code its user types (RFC 8628 §3.3): its SHA-256, as for
-- every other bearer value of the provider's state.
ALTER TABLE kigo_gateway.oidc_state ADD COLUMN user_code_hash text;

CREATE INDEX oidc_state_user_code ON kigo_gateway.oidc_state (user_code_hash) WHERE user_code_hash IS NOT NULL;
`,
  },
]
