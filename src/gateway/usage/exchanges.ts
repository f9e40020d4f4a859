// OAuth 1.0a tokens exchanged for OAuth 2.0 grants (docs/gateway.md#oauth-10a-as-a-legacy-method),
// table kigo_gateway.oauth1_exchanges (migration 94). The token endpoint's exchange records
// each one here, in its own transaction when it has one; the oauth1 policy's moved rule
// (moved.ts) and the notices' funnel read it: a user's token of an application has moved
// once exchanged. Exchanging a token again moves its time forward, never back. The token
// is the public identifier of an access token (as in access_tokens), never its secret.
import type { Db, Queryable } from '../../common/sql.js'

export interface Oauth1Exchange {
  consumerKey: string
  token: string
  userId: string
  /** ms since the epoch. */
  exchangedAt: number
}

export class Oauth1ExchangeStore {
  constructor(private readonly db: Db) {}

  /** Records an exchange of `token` (on `q`, the exchange's transaction, when given). */
  async record(e: Oauth1Exchange, q: Queryable = this.db): Promise<void> {
    await q.query(
      `INSERT INTO kigo_gateway.oauth1_exchanges AS x (consumer_key, token, user_id, exchanged_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (consumer_key, token) DO UPDATE SET exchanged_at = GREATEST(x.exchanged_at, EXCLUDED.exchanged_at)`,
      [e.consumerKey, e.token, e.userId, new Date(e.exchangedAt).toISOString()],
    )
  }

  /** The exchanges of the given applications' tokens. */
  async forApplications(consumerKeys: string[]): Promise<Oauth1Exchange[]> {
    if (consumerKeys.length === 0) return []
    const rows = await this.db.query<{ consumer_key: string; token: string; user_id: string; exchanged_at: Date | string }>(
      'SELECT consumer_key, token, user_id, exchanged_at FROM kigo_gateway.oauth1_exchanges WHERE consumer_key = ANY($1::text[])',
      [consumerKeys],
    )
    return rows.map((r) => ({ consumerKey: r.consumer_key, token: r.token, userId: r.user_id, exchangedAt: new Date(r.exchanged_at).getTime() }))
  }
}
