// A new embedded data directory in a fraction of the time: a copy of an empty one.
// Opening PGlite in an empty directory runs initdb inside its WebAssembly PostgreSQL, which
// costs 2 to 3 s of CPU, while the migrations after it cost a tenth of that. The suite's
// global setup (test/global-setup.ts) makes one blank database (initdb, nothing of kigo's)
// per PGlite version and keeps it in the system's temp directory; a test that wants a fresh
// store gets a copy of it, and kigo then opens it and applies every migration as it does on
// any start. Only the tests about a first start in an empty directory still run initdb
// (docs/development.md#running-the-tests). Tests that build the gateway's apps without
// a core (test/helpers/gateway-app.ts) start from a second copy with the gateway's schema
// already migrated, made once for each set of migrations.
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The blank embedded database's folder (its `db` directory's parent). */
    embeddedTemplate: string
    /** The same with the gateway's schema migrated. */
    gatewayTemplate: string
  }
}

/** The data directory's folder kigo opens PGlite in (src/common/sql.ts). */
const dbFolder = 'db'

function pgliteVersion(): string {
  const require = createRequire(import.meta.url)
  const manifest = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json')
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
}

/** Makes the blank database once per PGlite version (atomically: concurrent runs each build and one rename wins); its folder. */
export async function ensureEmbeddedTemplate(): Promise<string> {
  const template = join(tmpdir(), `kigo-test-blank-pglite-${pgliteVersion()}`)
  if (existsSync(join(template, dbFolder, 'PG_VERSION'))) return template
  const building = mkdtempSync(`${template}-building-`)
  const { PGlite } = await import('@electric-sql/pglite')
  const db = await PGlite.create(join(building, dbFolder))
  await db.query('SELECT 1')
  await db.close()
  try {
    renameSync(building, template)
  } catch {
    // Another run made it first.
    rmSync(building, { recursive: true, force: true })
  }
  return template
}

/**
 * Where the gateway's template and its copies go: memory (/dev/shm) where there is such a
 * folder, since copying and removing a 40 MB directory of a thousand files on a busy disk
 * took 1 to 3 s a test; the system's temp directory otherwise.
 */
const scratch = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()

/**
 * Makes, from the blank one, a database with every gateway migration applied, once per
 * PGlite version and set of migrations (a changed or added migration makes a new one); its folder.
 */
export async function ensureGatewayTemplate(blank: string): Promise<string> {
  const { gatewayMigrations } = await import('../../src/gateway/schema.js')
  const { gatewaySchema } = await import('../../src/gateway/store/migrations.js')
  const { migrate, openDb } = await import('../../src/common/sql.js')
  const digest = createHash('sha256').update(JSON.stringify(gatewayMigrations)).digest('hex').slice(0, 16)
  const template = join(scratch, `kigo-test-gateway-pglite-${pgliteVersion()}-${digest}`)
  if (existsSync(join(template, dbFolder, 'PG_VERSION'))) return template
  const building = mkdtempSync(`${template}-building-`)
  cpSync(join(blank, dbFolder), join(building, dbFolder), { recursive: true })
  const db = await openDb({ dataDir: building })
  try {
    await migrate(db, gatewaySchema, gatewayMigrations)
  } finally {
    await db.close()
  }
  try {
    renameSync(building, template)
  } catch {
    rmSync(building, { recursive: true, force: true })
  }
  return template
}

/** A new data directory holding a database with the gateway's schema migrated and nothing in it; the caller removes it. */
export function gatewayDataDir(label: string): string {
  const dir = mkdtempSync(join(scratch, `kigo-${label}-`))
  cpSync(join(inject('gatewayTemplate'), dbFolder), join(dir, dbFolder), { recursive: true })
  return dir
}

/** A new, empty data directory holding a blank embedded database, for the whole of one test's use; the caller removes it. */
export function embeddedDataDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `kigo-${label}-`))
  cpSync(join(inject('embeddedTemplate'), dbFolder), join(dir, dbFolder), { recursive: true })
  return dir
}
