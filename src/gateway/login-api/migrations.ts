// The login API's tables (docs/login-api.md) in the gateway's schema, applied in the
// gateway schema's order (src/gateway/schema.ts), after the migration policy's table,
// whose check 40 widens. Versions 40 to 49, 81 and 84 belong to the login API; never edit
// one that has shipped.
import type { Migration } from '../../common/sql.js'

export const loginApiMigrations: Migration[] = [
  {
    version: 40,
    name: 'login API: sites and their certs; login_api under the migration policy',
    sql: `
-- A login site: api_key (public, URL-safe), secret sealed with AES-256-GCM under the row's
-- key like consumer secrets (src/gateway/store/crypto.ts), the callback the sign-in
-- redirects to, and its owner.
CREATE TABLE kigo_gateway.login_sites (
  api_key text PRIMARY KEY,
  secret text NOT NULL,
  name text NOT NULL,
  owner_id text NOT NULL REFERENCES kigo_gateway.users (id),
  callback_url text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX login_sites_owner ON kigo_gateway.login_sites (owner_id, created_at);

-- A cert issued at sign-in, kept only as its SHA-256: redeemed once (used_at), by its own
-- site, before expires_at. A deleted site takes its certs with it.
CREATE TABLE kigo_gateway.login_certs (
  cert_hash text PRIMARY KEY,
  api_key text NOT NULL REFERENCES kigo_gateway.login_sites (api_key) ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES kigo_gateway.users (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

CREATE INDEX login_certs_expiry ON kigo_gateway.login_certs (expires_at);

ALTER TABLE kigo_gateway.auth_policy DROP CONSTRAINT auth_policy_method_check;
ALTER TABLE kigo_gateway.auth_policy ADD CONSTRAINT auth_policy_method_check CHECK (method IN ('basic', 'wsse', 'login_api'));
`,
  },
  {
    version: 81,
    name: "a login site's previous secret, working until it expires",
    sql: `
-- docs/login-api.md#rotating-the-secret: the secret a rotation with an overlap replaced,
-- sealed under login_sites.previous_secret:<api_key>, and when it stops working.
ALTER TABLE kigo_gateway.login_sites ADD COLUMN previous_secret text;
ALTER TABLE kigo_gateway.login_sites ADD COLUMN previous_secret_expires_at timestamptz;
`,
  },
  {
    version: 84,
    name: 'login site home pages',
    sql: `
-- Optional: the page the sign-in's consent page links, so that a visitor sees who is asking.
ALTER TABLE kigo_gateway.login_sites ADD COLUMN home_url text;
`,
  },
]
