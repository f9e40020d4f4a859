// The identity store as the gateway and the kigo CLI open it: users and web sessions
// (src/gateway/store/) with the OAuth 1.0a applications and tokens (src/gateway/oauth1/)
// on the same database, answered by one IdentityStore.
import type { Db, Migration } from '../common/sql.js'
import { SqlOAuth1Store } from './oauth1/store.js'
import { identityStoreOn as usersOn, openIdentityStore as openUsers, type ApplicationStoreFactory, type IdentityStoreOptions, type SqlIdentityStore } from './store/index.js'

/** OAuth 1.0a's store, opened on the identity store's database (its `applications`). */
const oauth1Store: ApplicationStoreFactory = (base) => new SqlOAuth1Store(base)

/** Opens the database, applies pending migrations and returns the store with its applications (which closes the database on close). */
export const openIdentityStore = (options: IdentityStoreOptions): Promise<SqlIdentityStore> => openUsers({ applications: oauth1Store, ...options })

/** The store with its applications on a database its caller opened and closes, after applying pending migrations. */
export const identityStoreOn = (db: Db, secretKey: string, migrations: readonly Migration[]): Promise<SqlIdentityStore> => usersOn(db, secretKey, migrations, oauth1Store)
