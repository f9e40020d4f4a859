// One user with an API password, an application and an access token, and what a
// credential lookup must answer for each: the contract suite and the cache's own tests
// check the same answers.
import type { IdentityAdministration } from '../../src/gateway/store/index.js'

export async function seedCredentials(store: IdentityAdministration, userId: string) {
  const user = await store.createUser({ id: userId, name: 'Lookup User', password: 'login', apiPassword: 'api-1' })
  const app = await store.createConsumer({ name: 'Lookup App', ownerId: user.id, scopes: ['read_public', 'write_public'], callbackUrl: null })
  const token = await store.createAccessToken({ consumerKey: app.consumer.key, userId: user.id, scopes: ['write_public'] })
  return { user, app, token }
}

export type SeededCredentials = Awaited<ReturnType<typeof seedCredentials>>

/** The lookup's answers for the seeded API password, application and token. */
export function expectedLookups({ user, app, token }: SeededCredentials) {
  return {
    apiPassword: { userId: user.id, userName: 'Lookup User', apiPassword: 'api-1' },
    consumer: { key: app.consumer.key, name: 'Lookup App', secret: app.secret, scopes: ['read_public', 'write_public'] },
    accessToken: {
      token: token.token.token,
      secret: token.secret,
      consumerKey: app.consumer.key,
      userId: user.id,
      userName: 'Lookup User',
      scopes: ['write_public'],
      revoked: false,
    },
  }
}
