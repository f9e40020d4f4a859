// The two storage backends every contract suite runs against: the embedded database in
// a fresh temporary directory, and a fresh PostgreSQL database (null, and so skipped with
// a printed reason, when PostgreSQL is absent outside CI).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { IdentityStoreOptions } from '../../src/gateway/store/index.js'
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
