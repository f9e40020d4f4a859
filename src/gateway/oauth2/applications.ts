// OAuth 2.0 for an OAuth 1.0a application (docs/oauth2.md#for-an-oauth-10a-application):
// the application turns OAuth 2.0 on and gets an OpenID Connect client of the same name
// and owner, registered for the application's scopes, with its callback (or the URI given)
// as the redirect URI; the two are linked (oauth2_applications), so that the client may
// exchange the application's OAuth 1.0a access tokens (exchange.ts). Each exchange is
// recorded in oauth2_exchanges (each one, with its grant) and oauth1_exchanges (per token, for
// the oauth1 policy's moved rule).
import type { Db } from '../../common/sql.js'
import { Oauth1ExchangeStore } from '../usage/exchanges.js'
import type { ProviderClient, ProviderClients } from '../host/authorization.js'
import type { Consumer } from '../store/types.js'

/** Why OAuth 2.0 could not be turned on. */
export class OAuth2Refused extends Error {
  constructor(
    readonly reason: 'app_not_found' | 'already_on' | 'redirect_uri_required',
    message: string,
  ) {
    super(message)
  }
}

export interface OAuth2Application {
  consumer: Consumer
  client: ProviderClient
  /** Shown once; null for a public client. */
  secret: string | null
}

/** One exchange of an OAuth 1.0a access token (oauth2_exchanges). */
export interface Oauth1Exchange {
  consumerKey: string
  token: string
  userId: string
  clientId: string
  grantId: string
}

export class OAuth2Applications {
  constructor(
    private readonly db: Db,
    private readonly oidc: ProviderClients,
    private readonly consumers: { getConsumer(key: string): Promise<{ consumer: Consumer } | null> },
    private readonly exchanges = new Oauth1ExchangeStore(db),
  ) {}

  /** The OAuth 1.0a application a client belongs to, or null. */
  async consumerOf(clientId: string): Promise<string | null> {
    const rows = await this.db.query<{ consumer_key: string }>('SELECT consumer_key FROM kigo_gateway.oauth2_applications WHERE client_id = $1', [clientId])
    return rows[0]?.consumer_key ?? null
  }

  /** The client of an OAuth 1.0a application that turned OAuth 2.0 on, or null. */
  async clientOf(consumerKey: string): Promise<string | null> {
    const rows = await this.db.query<{ client_id: string }>('SELECT client_id FROM kigo_gateway.oauth2_applications WHERE consumer_key = $1', [consumerKey])
    return rows[0]?.client_id ?? null
  }

  /**
   * Turns OAuth 2.0 on for an application: a client of its name, owner and scopes, whose
   * redirect URI is `redirectUri` or else the application's callback. The store's checks
   * of a redirect URI apply (InvalidInput).
   */
  async turnOn(consumerKey: string, options: { redirectUri?: string; public?: boolean }): Promise<OAuth2Application> {
    const found = await this.consumers.getConsumer(consumerKey)
    if (!found) throw new OAuth2Refused('app_not_found', `No application with consumer key ${JSON.stringify(consumerKey)}`)
    const consumer = found.consumer
    if ((await this.clientOf(consumerKey)) !== null) throw new OAuth2Refused('already_on', `OAuth 2.0 is already on for ${JSON.stringify(consumer.name)}`)
    const redirectUri = options.redirectUri ?? (consumer.callbackUrl !== null && consumer.callbackUrl !== 'oob' ? consumer.callbackUrl : undefined)
    if (redirectUri === undefined) throw new OAuth2Refused('redirect_uri_required', 'The application has no callback URL: give the redirect URI its OAuth 2.0 client will use')
    const created = await this.oidc.createClient({ name: consumer.name, ownerId: consumer.ownerId, redirectUris: [redirectUri], public: options.public === true, apiScopes: consumer.scopes })
    try {
      await this.db.query('INSERT INTO kigo_gateway.oauth2_applications (consumer_key, client_id) VALUES ($1, $2)', [consumerKey, created.client.clientId])
    } catch (err) {
      // Another request turned it on first (or the application was deleted meanwhile).
      await this.oidc.deleteClient(created.client.clientId).catch(() => undefined)
      if ((await this.clientOf(consumerKey)) !== null) throw new OAuth2Refused('already_on', `OAuth 2.0 is already on for ${JSON.stringify(consumer.name)}`)
      throw err
    }
    return { consumer, client: created.client, secret: created.secret }
  }

  /**
   * The grants the exchanges of `token` recorded before exchange `id` made: each is revoked
   * by the next exchange. Two exchanges at once are ordered by their rows: the later one
   * revokes the earlier, so one grant of the token stays live.
   */
  async exchangedGrants(token: string, id: string): Promise<string[]> {
    const rows = await this.db.query<{ grant_id: string }>('SELECT DISTINCT grant_id FROM kigo_gateway.oauth2_exchanges WHERE token = $1 AND id < $2', [token, id])
    return rows.map((r) => r.grant_id)
  }

  /** Records an exchange; its row's id. */
  async recordExchange(e: Oauth1Exchange & { /** When, by the gateway's clock (ms). */ at?: number }): Promise<string> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<{ id: string | number }>('INSERT INTO kigo_gateway.oauth2_exchanges (consumer_key, token, user_id, client_id, grant_id) VALUES ($1, $2, $3, $4, $5) RETURNING id', [e.consumerKey, e.token, e.userId, e.clientId, e.grantId])
      // The token has moved (usage/moved.ts): the oauth1 policy's plan, notices and funnel read it.
      await this.exchanges.record({ consumerKey: e.consumerKey, token: e.token, userId: e.userId, exchangedAt: e.at ?? Date.now() }, tx)
      return String(rows[0]!.id)
    })
  }
}
