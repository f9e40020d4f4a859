// Opens the core's content store (docs/operations.md#modes, docs/operations.md#stored-data): PostgreSQL when a database URL is
// given, otherwise the embedded database in the data directory; pending migrations run
// first, safely when several core processes start at once.
import { migrate, openDb, type DbOptions, type DbTimeouts } from '../../common/sql.js'
import { coreSchema, migrations } from './migrations.js'
import { SqlContentStore } from './sql-content-store.js'
import type { ContentStore } from './types.js'

export type { ContentStore } from './types.js'
export { ReplyTargetNotFound } from './types.js'

export async function openContentStore(opts: { databaseUrl?: string; dataDir: string; maxConnections?: number; timeouts?: DbTimeouts; watch?: DbOptions['watch']; traced?: DbOptions['traced'] }): Promise<ContentStore> {
  const db = await openDb(opts)
  try {
    await migrate(db, coreSchema, migrations)
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
  return new SqlContentStore(db)
}
