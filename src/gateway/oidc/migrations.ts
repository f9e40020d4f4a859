// The OpenID Connect provider's tables (docs/oidc.md#storage), versions 50 to 59, 82 and 85 of the
// gateway schema's migrations, applied in the gateway schema's order
// (src/gateway/schema.ts). The same SQL runs on PGlite and on PostgreSQL.
import type { Migration } from '../../common/sql.js'

export const oidcMigrations: Migration[] = [
  {
    version: 50,
    name: 'OpenID Connect relying parties, signing keys and provider state',
    sql: `
-- Relying parties (sites that sign people in with OpenID Connect). secret: AES-256-GCM
-- (src/gateway/store/crypto.ts), null for a public client, which proves itself with PKCE
-- alone. redirect_uris are compared exactly.
CREATE TABLE kigo_gateway.oidc_clients (
  client_id text PRIMARY KEY,
  secret text,
  name text NOT NULL,
  owner_id text NOT NULL REFERENCES kigo_gateway.users (id),
  redirect_uris text[] NOT NULL,
  post_logout_redirect_uris text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX oidc_clients_owner ON kigo_gateway.oidc_clients (owner_id, created_at);

-- Signing keys: the private JWK sealed like the other secrets. The newest key without
-- retired_at signs; a retired key stays published in the JWKS until every token it
-- signed has expired, then it is deleted.
CREATE TABLE kigo_gateway.oidc_keys (
  kid text PRIMARY KEY,
  jwk text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz
);

-- What the provider library stores (grants, codes, tokens, sessions, interactions), one
-- row per model and id. id_hash is the SHA-256 of the id, which for codes and tokens is
-- the bearer value itself: a copy of this table yields no usable token. grant_id ties
-- codes and tokens to their grant, so revoking a grant removes them all.
CREATE TABLE kigo_gateway.oidc_state (
  model text NOT NULL,
  id_hash text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  uid_hash text,
  account_id text,
  client_id text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (model, id_hash)
);

CREATE INDEX oidc_state_grant ON kigo_gateway.oidc_state (grant_id) WHERE grant_id IS NOT NULL;

CREATE INDEX oidc_state_uid ON kigo_gateway.oidc_state (uid_hash) WHERE uid_hash IS NOT NULL;

CREATE INDEX oidc_state_account ON kigo_gateway.oidc_state (account_id, model) WHERE account_id IS NOT NULL;

CREATE INDEX oidc_state_expiry ON kigo_gateway.oidc_state (expires_at);
`,
  },
  {
    version: 82,
    name: "an OpenID Connect client's previous secret, working until it expires",
    sql: `
-- docs/oidc.md#rotating-the-client-secret: the client secret a rotation with an overlap
-- replaced, sealed under oidc_clients.previous_secret:<client_id>, and when it stops working.
ALTER TABLE kigo_gateway.oidc_clients ADD COLUMN previous_secret text;
ALTER TABLE kigo_gateway.oidc_clients ADD COLUMN previous_secret_expires_at timestamptz;
`,
  },
  {
    version: 85,
    name: 'OpenID Connect grants by client',
    sql: `
-- The consent page counts the people holding a grant of a client (countSignedInUsers):
-- from this index, never by reading the provider's whole state.
CREATE INDEX oidc_state_client_grants ON kigo_gateway.oidc_state (client_id, account_id) WHERE model = 'Grant' AND client_id IS NOT NULL;
`,
  },
]
