// The migration notices' tables (docs/gateway.md#migration-notices) in the gateway's schema:
// versions 70 to 79, applied in the gateway schema's order (src/gateway/schema.ts), after
// the usage report's and the login API's tables they read. Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const noticeMigrations: Migration[] = [
  {
    version: 70,
    name: 'migration notices: the steps each recipient was told, sweeps and the sender lease',
    sql: `
-- One row per (recipient, method, step) ever decided, unique: a step is told at most once.
-- email is the address it was mailed to, null for a recipient without one (unreachable,
-- shown on the account page only); message_key names the outbox message that carried it
-- (steps due together share one).
CREATE TABLE kigo_gateway.notices (
  user_id text NOT NULL,
  method text NOT NULL,
  step text NOT NULL,
  email text,
  message_key text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, method, step)
);

CREATE INDEX notices_created ON kigo_gateway.notices (created_at);

-- How far each method's usage rows have been swept for the steps due now (signature): a
-- pass reads only rows seen since (src/gateway/notices/sender.ts), and the whole lookback
-- again only when the due steps or their dates change.
CREATE TABLE kigo_gateway.notice_sweeps (
  method text PRIMARY KEY,
  signature text NOT NULL,
  swept_until timestamptz NOT NULL
);

-- One gateway at a time decides the notices: it holds this lease while its pass runs.
CREATE TABLE kigo_gateway.notice_lease (
  id integer PRIMARY KEY CHECK (id = 1),
  holder text NOT NULL,
  until timestamptz NOT NULL
);
`,
  },
  {
    version: 71,
    name: 'the last endpoints each legacy client called',
    sql: `
-- The account page's "which tool is this?": per (method, user, client) the last few
-- operations it called and when (src/gateway/notices/endpoints.ts), written in batches
-- like the usage report and trimmed to a few per client.
CREATE TABLE kigo_gateway.usage_endpoints (
  method text NOT NULL,
  user_id text NOT NULL,
  client text NOT NULL,
  endpoint text NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (method, user_id, client, endpoint)
);
`,
  },
  {
    version: 72,
    name: 'the refusal date each notice told, and a notice when that date moves earlier',
    sql: `
-- refusal_at is the date a notice told its recipient the method starts being refused
-- (null when none was set). A recipient told a date that then moves earlier is told the
-- new one once (step date_moved), once per new date: date_moved rows are unique per
-- (recipient, method, refusal_at), every other step per (recipient, method, step) as before.
ALTER TABLE kigo_gateway.notices ADD COLUMN refusal_at timestamptz;
ALTER TABLE kigo_gateway.notices DROP CONSTRAINT notices_pkey;
CREATE UNIQUE INDEX notices_step_once ON kigo_gateway.notices (user_id, method, step) WHERE step <> 'date_moved';
CREATE UNIQUE INDEX notices_date_moved_once ON kigo_gateway.notices (user_id, method, refusal_at) WHERE step = 'date_moved';
`,
  },
  {
    version: 73,
    name: 'usage rows written before sites were told apart by identity: their site or client, where the name names one',
    sql: `
-- Migration 13 keyed login-API and OpenID Connect usage by the site's api_key or the
-- client's client_id; rows written before it name only the site or client (its first 64
-- characters). Where exactly one site (one client) has that name, the row is its; rows of
-- a name several share stay unattributed rather than be given to the wrong owner.
UPDATE kigo_gateway.auth_usage a SET client_id = s.api_key
FROM kigo_gateway.login_sites s
WHERE a.method = 'login_api' AND a.client_id = '' AND a.client = left(s.name, 64)
  AND (SELECT count(*) FROM kigo_gateway.login_sites t WHERE left(t.name, 64) = left(s.name, 64)) = 1;
UPDATE kigo_gateway.auth_usage a SET client_id = c.client_id
FROM kigo_gateway.oidc_clients c
WHERE a.method = 'oidc' AND a.client_id = '' AND a.client = left(c.name, 64)
  AND (SELECT count(*) FROM kigo_gateway.oidc_clients t WHERE left(t.name, 64) = left(c.name, 64)) = 1;
`,
  },
]
