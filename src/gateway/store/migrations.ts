// The identity store's tables in the gateway's schema `kigo_gateway` (docs/operations.md#stored-data):
// users and web sessions (src/gateway/store/sql-identity-store.ts). Versions 1 and 2 made
// the OAuth 1.0a tables (applications, access and request tokens) beside them, as
// shipped; the later changes to those tables are src/gateway/oauth1/migrations.ts's.
// Versions 1 to 9, 31 (a user's contact e-mail), 61 (users sent to the core) and 90 (a
// secret held for the page that shows it once). Every feature keeps its own tables' migrations in
// its folder; src/gateway/schema.ts lists them all in the order `migrate` of
// src/common/sql.ts applies them. The same SQL runs on PGlite and on PostgreSQL.
// Statements end with `;` at a line end: that is where `migrate` splits them. Append new
// migrations with the next free version of the owner's range; never edit one that has
// shipped.
import type { Migration } from '../../common/sql.js'

export const gatewaySchema = 'kigo_gateway'

export const identityMigrations: Migration[] = [
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
  {
    version: 31,
    name: 'contact e-mail per user',
    sql: `
-- Optional: whom to write to about migrating (the usage report as an outreach list).
ALTER TABLE kigo_gateway.users ADD COLUMN email text;
`,
  },
  {
    version: 61,
    name: 'registered users sent to the core',
    sql: `
-- docs/gateway.md#registered-users-in-the-core: name_version is raised by each change of
-- the name; core_version is the highest the core acknowledged. A user whose core_version
-- is lower is sent again, so users made before this (0 of 1) are sent at start-up.
ALTER TABLE kigo_gateway.users ADD COLUMN name_version bigint NOT NULL DEFAULT 1;
ALTER TABLE kigo_gateway.users ADD COLUMN core_version bigint NOT NULL DEFAULT 0;
CREATE INDEX users_core_pending ON kigo_gateway.users (id) WHERE core_version < name_version;
`,
  },
]

/** The web sessions' slot for a secret shown once: applied after the OAuth 1.0a feature's migrations (src/gateway/schema.ts). */
export const webSessionMigrations: Migration[] = [
  {
    version: 90,
    name: 'a new secret held for the one page that shows it',
    sql: `
-- docs/gateway.md#a-new-secret-is-shown-once: a registration or rotation answers 303 to a
-- page that shows the new secret once; until that page is opened the secret waits here,
-- sealed (bound to the session and the slot's name), beside the session that made it, for
-- a few minutes. Opening the page clears it, and so does the session's end.
ALTER TABLE kigo_gateway.web_sessions ADD COLUMN shown_slot text;
ALTER TABLE kigo_gateway.web_sessions ADD COLUMN shown_secret text;
ALTER TABLE kigo_gateway.web_sessions ADD COLUMN shown_expires_at timestamptz;
`,
  },
]
