// The usage report's tables (docs/gateway.md#the-usage-report) in the gateway's schema:
// versions 11, 12 and 13 (of the 10 to 19 shared with the migration policy), 32 (when each
// application last acted), 38 (the deployment of a row's requests) and 94 (OAuth 1.0a
// tokens exchanged for OAuth 2.0), applied in the
// gateway schema's order (src/gateway/schema.ts).
// Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const usageMigrations: Migration[] = [
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
  {
    version: 13,
    name: 'usage rows name a login-API site or OpenID Connect client by its identity; when a row was first refused',
    sql: `
-- client_id: the api_key of the login-API site, or the client_id of the OpenID Connect
-- client, a row counts ('' for every other method): sites and clients are told apart by
-- identity, never by their names, which anyone may choose. It joins the key, so two sites
-- of one name keep two rows. Rows written before carry ''; migration 73 (notices, after
-- the sites' and clients' tables exist) fills it in where the name is unambiguous.
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN client_id text NOT NULL DEFAULT '';
ALTER TABLE kigo_gateway.auth_usage DROP CONSTRAINT auth_usage_pkey;
ALTER TABLE kigo_gateway.auth_usage ADD PRIMARY KEY (method, user_id, client, client_id);
-- When the policy first refused a request of the row ("refused since" on the dashboard).
-- Rows refused before it are taken as refused since their last request, the one date known.
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN first_refused timestamptz;
UPDATE kigo_gateway.auth_usage SET first_refused = last_seen WHERE refused_by_policy > 0;
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
    version: 38,
    name: 'the deployment of each usage row\'s latest request',
    sql: `
-- The deployment (domestic or global) the row's latest request came through
-- (src/gateway/usage/store.ts): a migration notice links to the deployment its recipient
-- uses. Rows written before this migration did not record it; they are taken as domestic.
ALTER TABLE kigo_gateway.auth_usage ADD COLUMN deployment text NOT NULL DEFAULT 'domestic';
`,
  },
  {
    version: 94,
    name: 'OAuth 1.0a tokens exchanged for OAuth 2.0 grants',
    sql: `
-- One row per OAuth 1.0a access token exchanged at the token endpoint (src/gateway/usage/exchanges.ts):
-- the oauth1 policy's moved rule reads it (a token exchanged has moved). Exchanging the
-- same token again moves exchanged_at forward. No foreign keys: a deleted application or
-- user leaves its history, as the usage rows do.
CREATE TABLE kigo_gateway.oauth1_exchanges (
  consumer_key text NOT NULL,
  token text NOT NULL,
  user_id text NOT NULL,
  exchanged_at timestamptz NOT NULL,
  PRIMARY KEY (consumer_key, token)
);

CREATE INDEX oauth1_exchanges_user ON kigo_gateway.oauth1_exchanges (user_id, consumer_key);
`,
  },
]
