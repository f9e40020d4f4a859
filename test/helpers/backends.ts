// The two storage backends every contract suite runs against: the embedded database in
// a fresh temporary directory, and a fresh PostgreSQL database (null, and so skipped with
// a printed reason, when PostgreSQL is absent outside CI).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { openDb, type Db } from '../../src/common/sql.js'
import { openIdentityStore, type IdentityStoreOptions, type SqlIdentityStore } from '../../src/gateway/store/index.js'
import { freshPostgres } from './services.js'

export interface StorageBackend {
  databaseUrl?: string
  dataDir: string
  cleanup: () => Promise<void>
}

export async function storageBackends(label: string): Promise<Array<[string, (() => Promise<StorageBackend>) | null]>> {
  const postgres = await freshPostgres()
  return [
    [
      'embedded',
      async () => {
        const dataDir = mkdtempSync(join(tmpdir(), `kigo-${label}-`))
        return { dataDir, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) }
      },
    ],
    ['postgres', postgres && (async () => ({ databaseUrl: postgres.url, dataDir: '/nonexistent', cleanup: () => postgres.drop() }))],
  ]
}

/** The identity store's options on each backend, with a fresh master key (gateway store suites). */
export interface IdentityStoreBackend {
  options: IdentityStoreOptions
  cleanup: () => Promise<void>
}

export async function identityStoreBackends(label: string): Promise<Array<[string, (() => Promise<IdentityStoreBackend>) | null]>> {
  return (await storageBackends(label)).map(([name, setup]) => [
    name,
    setup &&
      (async () => {
        const { cleanup, ...where } = await setup()
        return { options: { ...where, secretKey: randomBytes(32).toString('base64') }, cleanup }
      }),
  ])
}

export interface OpenedIdentityStore {
  backend: IdentityStoreBackend
  store: SqlIdentityStore
  /** A plain connection to the same database, for looking at what the store wrote. */
  raw: Db
}

/**
 * Opens an identity store on `setup`'s backend before the suite's tests (handing it to
 * `use`) and closes everything after them.
 */
export function openIdentityStoreForSuite(setup: () => Promise<IdentityStoreBackend>, use: (opened: OpenedIdentityStore) => void): void {
  let opened: Partial<OpenedIdentityStore> = {}
  beforeAll(async () => {
    const backend = await setup()
    opened = { backend, store: await openIdentityStore(backend.options), raw: await openDb(backend.options) }
    use(opened as OpenedIdentityStore)
  })
  afterAll(async () => {
    await opened.store?.close()
    await opened.raw?.close()
    await opened.backend?.cleanup()
  })
}
