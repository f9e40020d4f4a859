// The gateway's schema `kigo_gateway` as numbered migrations (docs/operations.md#stored-data), applied at
// start-up by `migrate` of src/common/sql.ts. The same SQL runs on PGlite and on
// PostgreSQL. Statements end with `;` at a line end: that is where `migrate` splits them.
//
// Append new migrations (request tokens, sessions, policy, usage, …) to the array with
// the next version number; never edit one that has shipped.
import type { Migration } from '../../common/sql.js'
import { loginApiMigrations } from '../login-api/migrations.js'
import { oidcMigrations } from '../oidc/migrations.js'

export const gatewaySchema = 'kigo_gateway'

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'users, consumers, access tokens',
    sql: `
-- password_hash: scrypt, PHC string. api_password: AES-256-GCM, sealed with the row's id
-- as associated data (src/gateway/store/crypto.ts). Neither is ever plain text.
CREATE TABLE kigo_gateway.users (
  id text PRIMARY KEY,
  name text NOT NULL,
  password_hash text NOT NULL,
  api_password text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Ids differing only in case would be easy to mistake for one another on pages and in
-- links: they are one id as far as uniqueness goes, while lookups stay exact.
CREATE UNIQUE INDEX users_id_folded ON kigo_gateway.users (lower(id));

CREATE TABLE kigo_gateway.consumers (
  key text PRIMARY KEY,
  secret text NOT NULL,
  name text NOT NULL,
  owner_id text NOT NULL REFERENCES kigo_gateway.users (id),
  scopes text[] NOT NULL,
  callback_url text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX consumers_owner ON kigo_gateway.consumers (owner_id, created_at);

-- A revoked token stays (revoked_at set) so that its use is answered token_revoked
-- rather than token_rejected (docs/gateway.md#oauth-10a) and the account pages can show its history.
CREATE TABLE kigo_gateway.access_tokens (
  token text PRIMARY KEY,
  secret text NOT NULL,
  consumer_key text NOT NULL REFERENCES kigo_gateway.consumers (key),
  user_id text NOT NULL REFERENCES kigo_gateway.users (id),
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE INDEX access_tokens_user ON kigo_gateway.access_tokens (user_id, created_at);

CREATE INDEX access_tokens_consumer ON kigo_gateway.access_tokens (consumer_key, created_at);
`,
  },
  {
    version: 2,
    name: 'request tokens and web sessions (OAuth provider, account pages)',
    sql: `
-- RFC 5849 §2.1-2.3: a request token is issued (pending), decided by its user (approved
-- or denied) and exchanged once (used). secret: AES-256-GCM like the other secrets.
-- verifier_hash: SHA-256 of the verifier, which is only ever compared. Rows outlive their
-- expiry for a day so that a late exchange is answered token_expired, not token_rejected.
CREATE TABLE kigo_gateway.request_tokens (
  token text PRIMARY KEY,
  secret text NOT NULL,
  consumer_key text NOT NULL REFERENCES kigo_gateway.consumers (key),
  callback text NOT NULL,
  scopes text[] NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'denied', 'used')),
  user_id text REFERENCES kigo_gateway.users (id),
  verifier_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  decided_at timestamptz,
  used_at timestamptz
);

CREATE INDEX request_tokens_expiry ON kigo_gateway.request_tokens (expires_at);

-- Account-area sessions: the cookie holds a random id, stored here only as its SHA-256
-- (a database leak yields no usable session). user_id is null for a signed-out visitor's
-- session, which exists only to bind the login form's CSRF token. csrf_token is sealed.
CREATE TABLE kigo_gateway.web_sessions (
  id_hash text PRIMARY KEY,
  user_id text REFERENCES kigo_gateway.users (id),
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

CREATE INDEX web_sessions_expiry ON kigo_gateway.web_sessions (expires_at);

CREATE INDEX web_sessions_user ON kigo_gateway.web_sessions (user_id);
`,
  },
  // ---- migration controls and usage (docs/gateway.md#the-migration-policy, docs/gateway.md#the-usage-report): versions 10 to 19 ----
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
  {
    version: 11,
    name: 'auth usage report and per-minute request counts',
    sql: `
-- The legacy-usage report: one row per (method, user, client), counts added by batched
-- upserts from every gateway (src/gateway/usage/store.ts).
CREATE TABLE kigo_gateway.auth_usage (
  method text NOT NULL,
  user_id text NOT NULL,
  client text NOT NULL,
  count bigint NOT NULL,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (method, user_id, client)
);

CREATE INDEX auth_usage_last_seen ON kigo_gateway.auth_usage (last_seen);

-- Requests per credential method and minute, for the dashboard chart; pruned after a week.
CREATE TABLE kigo_gateway.auth_requests_per_minute (
  minute timestamptz NOT NULL,
  method text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (minute, method)
);
`,
  },
  {
    version: 12,
    name: 'usage outcomes per row and per minute',
    sql: `
-- Outcomes per row (src/gateway/usage/store.ts): count is every attempt of the row, and
-- accepted, refused_by_policy, failed_credentials and throttled split it. Rows written
-- before this migration counted verified requests, refused by the policy or not; they are
-- taken as accepted. The report's "who must migrate" and the chart use accepted only.
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN accepted bigint NOT NULL DEFAULT 0;
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN refused_by_policy bigint NOT NULL DEFAULT 0;
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN failed_credentials bigint NOT NULL DEFAULT 0;
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN throttled bigint NOT NULL DEFAULT 0;
UPDATE kigo_gateway.auth_usage SET accepted = count;
ALTER TABLE kigo_gateway.auth_requests_per_minute ADD COLUMN accepted bigint NOT NULL DEFAULT 0;
UPDATE kigo_gateway.auth_requests_per_minute SET accepted = count;
`,
  },
  // ---- operators' records (audit trail, user contact): versions 30 and 31; the developer and user migration aids 32; operator sessions 33, user locks 34 ----
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
    version: 31,
    name: 'contact e-mail per user',
    sql: `
-- Optional: whom to write to about migrating (the usage report as an outreach list).
ALTER TABLE kigo_gateway.users ADD COLUMN email text;
`,
  },
  {
    version: 32,
    name: 'when each authorized application last acted for its user',
    sql: `
-- Written in batches from every gateway (src/gateway/usage/app-use.ts); no foreign keys,
-- so that a flush never waits on the users or consumers it names.
CREATE TABLE kigo_gateway.app_last_used (
  user_id text NOT NULL,
  consumer_key text NOT NULL,
  last_used timestamptz NOT NULL,
  PRIMARY KEY (user_id, consumer_key)
);
`,
  },
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
  {
    version: 35,
    name: 'password reset links',
    sql: `
-- "Forgot your password?" by mail (src/gateway/provider/password-reset.ts): single-use,
-- expiring links, kept as SHA-256 digests only.
CREATE TABLE kigo_gateway.password_resets (
  token_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES kigo_gateway.users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX password_resets_expires ON kigo_gateway.password_resets (expires_at);
`,
  },
  // ---- the login API (docs/login-api.md): versions 40 to 49, in its own folder ----
  ...loginApiMigrations,
  // ---- the OpenID Connect provider (src/gateway/oidc/migrations.ts): versions 50 to 59 ----
  ...oidcMigrations,
]
