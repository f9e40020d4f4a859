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
  {
    version: 111,
    name: 'OAuth 2.0 for OAuth 1.0a applications: the client of each application, and each token exchanged',
    sql: `
-- An OAuth 1.0a application (consumer) that turned OAuth 2.0 on: its OpenID Connect client,
-- one each way. Deleting either ends the link.
CREATE TABLE kigo_gateway.oauth2_applications (
  consumer_key text PRIMARY KEY REFERENCES kigo_gateway.consumers (key) ON DELETE CASCADE,
  client_id text NOT NULL UNIQUE REFERENCES kigo_gateway.oidc_clients (client_id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Each exchange of an OAuth 1.0a access token for OAuth 2.0 tokens (the token exchange at
-- the token endpoint; oauth1_exchanges keeps one row per token for the moved rule): which
-- application's, whose, when, and the OAuth 2.0 grant it made (a
-- later exchange of the same token revokes it). The token is the access token's public
-- identifier (kigo_gateway.access_tokens.token); its secret never travels nor is kept here.
CREATE TABLE kigo_gateway.oauth2_exchanges (
  id bigserial PRIMARY KEY,
  consumer_key text NOT NULL,
  token text NOT NULL,
  user_id text NOT NULL,
  client_id text NOT NULL,
  grant_id text NOT NULL,
  exchanged_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX oauth2_exchanges_token ON kigo_gateway.oauth2_exchanges (token, exchanged_at);

CREATE INDEX oauth2_exchanges_consumer ON kigo_gateway.oauth2_exchanges (consumer_key, exchanged_at);
`,
  },
]
