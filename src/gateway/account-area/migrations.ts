// The provider's own tables in the gateway's schema, the password reset links (version 35)
// the contact e-mail confirmation links (37) and the links that undo a change of
// contact e-mail (92),
// applied in the gateway schema's order (src/gateway/schema.ts). Its consumers, tokens and
// sessions are the identity store's (src/gateway/store/migrations.ts), which reads and
// writes them. Never edit one that has shipped.
import type { Migration } from '../../common/sql.js'

export const providerMigrations: Migration[] = [
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
  {
    version: 37,
    name: 'contact e-mail confirmation links',
    sql: `
-- A user's new contact e-mail waits here until its owner opens the link mailed to it
-- (src/gateway/account-area/contact-email.ts): single use, expiring, kept as SHA-256 digests only.
CREATE TABLE kigo_gateway.email_verifications (
  token_hash text PRIMARY KEY,
  user_id text NOT NULL REFERENCES kigo_gateway.users (id) ON DELETE CASCADE,
  email text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX email_verifications_user ON kigo_gateway.email_verifications (user_id);
`,
  },
  {
    version: 92,
    name: 'links that undo a change of contact e-mail',
    sql: `
-- When a contact e-mail changes, the old address is mailed a link that puts it back and
-- ends every session (src/gateway/account-area/contact-email.ts): one per user, single
-- use, expiring, kept as a SHA-256 digest only. The row also says when the address
-- changed, so that a password reset soon after is told to the old address too.
CREATE TABLE kigo_gateway.email_undos (
  token_hash text PRIMARY KEY,
  user_id text NOT NULL UNIQUE REFERENCES kigo_gateway.users (id) ON DELETE CASCADE,
  old_email text NOT NULL,
  new_email text,
  changed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
`,
  },
]
