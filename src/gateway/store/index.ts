// Opening the gateway's identity store: the embedded database in the data directory, or
// PostgreSQL when DATABASE_URL is set (docs/operations.md#modes), migrated at start-up (docs/operations.md#stored-data).
import { migrate, openDb, type Db, type DbOptions, type DbTimeouts, type Migration } from '../../common/sql.js'
import { gatewaySchema } from './migrations.js'
import { SqlIdentityStore, type ApplicationStoreFactory } from './sql-identity-store.js'

export { gatewaySchema } from './migrations.js'
export { SqlIdentityStore, type ApplicationStoreFactory, type IdentityChange, type IdentityChangeSource, type IdentityStoreBase } from './sql-identity-store.js'
export { CachedCredentialLookup, storeCredentialLookup, type CredentialLookupOptions } from './credential-lookup.js'
export { InvalidInput } from './validation.js'
export { UnreadableSecret } from './crypto.js'
export * from './types.js'

export interface IdentityStoreOptions {
  /** PostgreSQL URL; the embedded database in `dataDir` when absent. */
  databaseUrl?: string
  dataDir: string
  /** KIGO_SECRET_KEY (32 bytes, base64). */
  secretKey: string
  maxConnections?: number
  timeouts?: DbTimeouts
  watch?: DbOptions['watch']
  /**
   * The gateway schema's migrations, every feature's, in their order (src/gateway/schema.ts);
   * the store's own tables are only some of them.
   */
  migrations: readonly Migration[]
  /** The OAuth 1.0a applications' store (src/gateway/identity.ts opens OAuth 1.0a's). */
  applications?: ApplicationStoreFactory
}

/** Opens the database, applies pending migrations and returns the store (which closes the database on close). */
export async function openIdentityStore(options: IdentityStoreOptions): Promise<SqlIdentityStore> {
  const db = await openDb({ databaseUrl: options.databaseUrl, dataDir: options.dataDir, maxConnections: options.maxConnections, ...(options.timeouts ? { timeouts: options.timeouts } : {}), ...(options.watch ? { watch: options.watch } : {}) })
  try {
    await migrate(db, gatewaySchema, options.migrations)
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
  return new SqlIdentityStore(db, { secretKey: options.secretKey, ownsDb: true, ...(options.applications ? { applications: options.applications } : {}) })
}

/**
 * The store on a database its caller opened and closes (the gateway shares one among its
 * stores), after applying pending migrations: every feature's, in their order
 * (src/gateway/schema.ts).
 */
export async function identityStoreOn(db: Db, secretKey: string, migrations: readonly Migration[], applications?: ApplicationStoreFactory): Promise<SqlIdentityStore> {
  await migrate(db, gatewaySchema, migrations)
  return new SqlIdentityStore(db, { secretKey, ...(applications ? { applications } : {}) })
}
