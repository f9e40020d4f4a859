// The OAuth 1.0a feature's changes to its tables in `kigo_gateway` (docs/operations.md#stored-data):
// applications (consumers) and access tokens, read and written by ./store.ts. The tables
// themselves were made by the identity store's versions 1 and 2 (store/migrations.ts),
// which shipped with the users' tables and stay there. Versions 80 (a consumer's previous
// secret) and 83 (an application's home page); src/gateway/schema.ts applies them right
// after the identity store's 61 and before its 90, the order every release applied them in.
// Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const oauth1Migrations: Migration[] = [
  {
    version: 80,
    name: "a consumer's previous secret, working until it expires",
    sql: `
-- docs/gateway.md#rotating-a-secret: a rotation with an overlap keeps the replaced secret,
-- sealed like the current one but bound to its own column (consumers.previous_secret:<key>),
-- until previous_secret_expires_at. Both are null when there is none.
ALTER TABLE kigo_gateway.consumers ADD COLUMN previous_secret text;
ALTER TABLE kigo_gateway.consumers ADD COLUMN previous_secret_expires_at timestamptz;
`,
  },
  {
    version: 83,
    name: 'application home pages; unrevoked tokens by application and user',
    sql: `
-- Optional: the page the consent page links, so that a visitor sees who is asking.
ALTER TABLE kigo_gateway.consumers ADD COLUMN home_url text;
-- The consent page counts the people using an application (distinct users holding an
-- unrevoked token) from this index alone.
CREATE INDEX access_tokens_consumer_live ON kigo_gateway.access_tokens (consumer_key, user_id) WHERE revoked_at IS NULL;
`,
  },
]
