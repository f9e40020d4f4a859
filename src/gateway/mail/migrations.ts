// The mail folder's tables in the gateway's schema (docs/operations.md#mail): versions 60
// to 64 and 91, applied in the gateway schema's order (src/gateway/schema.ts). Never edit one
// that has shipped.
import type { Migration } from '../../common/sql.js'

export const mailMigrations: Migration[] = [
  {
    version: 60,
    name: 'mail outbox',
    sql: `
-- Every mail kigo sends (src/gateway/mail/outbox.ts): one row per message, unique by the
-- key its sender gives (a notice's (recipient, method, step), a reset's own key). A row is
-- due while pending and next_attempt_at has come; a sender claims it by moving
-- next_attempt_at to the end of its lease and writing its claim, so another sender skips
-- it until the lease runs out. The body is sealed under the secret key (a reset link is a
-- secret) and erased once sent.
CREATE TABLE kigo_gateway.outbox (
  id bigserial PRIMARY KEY,
  key text NOT NULL UNIQUE,
  kind text NOT NULL,
  labels jsonb NOT NULL DEFAULT '{}'::jsonb,
  recipient text NOT NULL,
  subject text NOT NULL,
  body text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'expired')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  next_attempt_at timestamptz NOT NULL,
  claim text,
  attempts integer NOT NULL DEFAULT 0,
  unconfirmed integer NOT NULL DEFAULT 0,
  last_attempt_at timestamptz,
  last_error text,
  sent_at timestamptz
);
CREATE INDEX outbox_due ON kigo_gateway.outbox (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX outbox_kind ON kigo_gateway.outbox (kind, id);
`,
  },
  {
    version: 91,
    name: 'mail budgets',
    sql: `
-- How many mails of a kind a user or a recipient address caused in the current window
-- (src/gateway/mail/budget.ts): a reset link per user per 15 minutes, confirmation links
-- per user and per address per day. Keys are kind:user or kind:address; a row whose
-- window has ended starts again at the next mail.
CREATE TABLE kigo_gateway.mail_budgets (
  key text PRIMARY KEY,
  spent integer NOT NULL,
  window_ends timestamptz NOT NULL
);
`,
  },
]
