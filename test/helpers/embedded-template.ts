// A new embedded data directory in a fraction of the time: a copy of an empty one.
// Opening PGlite in an empty directory runs initdb inside its WebAssembly PostgreSQL, which
// costs 2 to 3 s of CPU, while the migrations after it cost a tenth of that. The suite's
// global setup (test/global-setup.ts) makes one blank database (initdb, nothing of kigo's)
// per PGlite version and keeps it in the system's temp directory; a test that wants a fresh
// store gets a copy of it, and kigo then opens it and applies every migration as it does on
// any start. Only the tests about a first start in an empty directory still run initdb
// (docs/development.md#running-the-tests).
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The blank embedded database's folder (its `db` directory's parent). */
    embeddedTemplate: string
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

/** A new, empty data directory holding a blank embedded database, for the whole of one test's use; the caller removes it. */
export function embeddedDataDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `kigo-${label}-`))
  cpSync(join(inject('embeddedTemplate'), dbFolder), join(dir, dbFolder), { recursive: true })
  return dir
}
