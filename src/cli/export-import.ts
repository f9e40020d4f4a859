// `kigo export` and `kigo import` (docs/operations.md#moving-to-postgresql): a whole kigo store, both schemas,
// from an embedded data directory or a PostgreSQL database into a file, and from that file
// into the other kind. They work on the databases themselves, not through the operator
// API, and need kigo stopped on the embedded side (PGlite holds a data directory for one
// process only).
//
// The dump is gzip'd newline-delimited JSON: a header (format version, the source's
// migrations, the key check value, each table's columns and row count, the sequences),
// then per table a `{"table":…}` line and one line per row (a JSON array of the
// columns' text, see rowText), then a trailer with each table's row count and checksum.
// Export reads everything in one REPEATABLE READ, read-only transaction (one snapshot);
// import writes everything in one transaction, so an import that is interrupted leaves
// the target as it was and can simply be run again.
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip, createGzip } from 'node:zlib'
import { projectRoot } from '../common/config.js'
import { safeEqual } from '../common/secrets.js'
import { migrate, type Db, type Queryable } from '../common/sql.js'
import { runError, usageError, type Env } from './admin-client.js'
import type { Command, CommandIo, Parsed } from './command.js'
import { formatTable } from './output.js'
import { Progress, type ProgressOutput } from './export-import-progress.js'
import {
  Checksum,
  canonicalSession,
  catalogTables,
  embeddedExists,
  ident,
  insertSql,
  keyCheckValue,
  keyOpensStore,
  kigoSchemas,
  openStore,
  presentSchemas,
  rebuiltTables,
  rowText,
  secretKeyOf,
  sequenceStates,
  storeLocation,
  tableChecksum,
  uncoveredTables,
  type SchemaInfo,
  type SequenceState,
  type StoreLocation,
  type TableInfo,
} from './export-import-store.js'

export const dumpFormat = 'kigo-dump'

/** The version of kigo making or reading a dump, for messages and the header. */
const kigoVersion = (): string => (JSON.parse(readFileSync(resolve(projectRoot, 'package.json'), 'utf8')) as { version: string }).version
export const dumpFormatVersion = 1

export interface DumpHeader {
  format: typeof dumpFormat
  version: number
  kigo: string
  created_at: string
  source: 'embedded' | 'postgresql'
  key_check: string
  schemas: SchemaInfo[]
  tables: Array<TableInfo & { rows: number }>
  sequences: SequenceState[]
}

export interface DumpTrailer {
  end: true
  tables: Record<string, { rows: number; checksum: string }>
}

/** Rows fetched or inserted at once; tables with bytea columns (photos) go by fewer. */
const batchRows = 2000
const batchRowsWithBytes = 50
/** A batch of row lines sent to the target at once holds at most this many characters. */
const batchChars = 4 * 1024 * 1024

const defaultEverySeconds = 5

function everySeconds(values: Parsed['values'], where: string): number {
  const raw = values['progress-every']
  if (raw === undefined) return defaultEverySeconds
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw) || Number(raw) <= 0) throw usageError(`${where}: --progress-every takes a number of seconds above 0, got ${JSON.stringify(raw)}`)
  return Number(raw)
}

// ---- export ------------------------------------------------------------------------------

export interface ExportOptions {
  from: StoreLocation
  out: string
  env: Env
  progress: ProgressOutput
  everySeconds: number
}

export interface ExportSummary {
  file: string
  bytes: number
  tables: Array<{ table: string; rows: number; checksum: string }>
}

export async function exportStore(options: ExportOptions): Promise<ExportSummary> {
  const { from } = options
  if (from.kind === 'embedded' && !embeddedExists(from.dataDir)) throw runError(`no kigo store in ${from.dataDir} (it has no db/ directory)`)
  const key = secretKeyOf(from, options.env)
  if (key === null) throw runError(`set KIGO_SECRET_KEY to the key ${from.label} runs with: the dump records which key its secrets are sealed under`)
  const partial = `${options.out}.partial`
  const db = await openStore(from)
  try {
    const trailer = await db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
      await canonicalSession(tx)
      const schemas = await presentSchemas(tx)
      if (schemas.length === 0) throw runError(`no kigo schema (${kigoSchemas.map((s) => s.name).join(', ')}) in ${from.label}`)
      const names = schemas.map((s) => s.name)
      const tables = await catalogTables(tx, names)
      const uncovered = uncoveredTables(tables)
      if (uncovered.length > 0) {
        throw runError(`${uncovered.join(', ')}: not in the tables kigo export knows (movedTables in src/cli/export-import-store.ts); a dump without ${uncovered.length > 1 ? 'them' : 'it'} would lose data, so nothing was written`)
      }
      if (!(await keyOpensStore(tx, key.key, names))) throw runError(`${key.from} does not open the secrets of ${from.label}: it is not the key the store runs with`)
      const counted: DumpHeader['tables'] = []
      for (const t of tables) {
        const [row] = await tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${ident(t.name)}`)
        counted.push({ ...t, rows: Number(row!.n) })
      }
      const header: DumpHeader = {
        format: dumpFormat,
        version: dumpFormatVersion,
        kigo: kigoVersion(),
        created_at: new Date().toISOString(),
        source: from.kind,
        key_check: keyCheckValue(key.key),
        schemas,
        tables: counted,
        sequences: await sequenceStates(tx, names),
      }
      const progress = new Progress({ what: 'export', total: counted.reduce((n, t) => n + t.rows, 0), out: options.progress, everySeconds: options.everySeconds })
      const end: DumpTrailer = { end: true, tables: {} }
      async function* lines(): AsyncGenerator<string> {
        yield JSON.stringify(header) + '\n'
        for (const table of counted) {
          yield JSON.stringify({ table: table.name }) + '\n'
          const sum = new Checksum()
          const size = table.columns.some((c) => c.type === 'bytea') ? batchRowsWithBytes : batchRows
          await tx.query(`DECLARE kigo_export NO SCROLL CURSOR FOR SELECT ${rowText(table)} AS line FROM ${ident(table.name)}`)
          for (;;) {
            const rows = await tx.query<{ line: string }>(`FETCH FORWARD ${size} FROM kigo_export`)
            if (rows.length === 0) break
            let chunk = ''
            for (const { line } of rows) {
              sum.add(line)
              chunk += line + '\n'
            }
            yield chunk
            progress.add(rows.length)
          }
          await tx.query('CLOSE kigo_export')
          if (sum.rows !== table.rows) throw new Error(`${table.name}: counted ${table.rows} rows, read ${sum.rows} in the same snapshot`)
          end.tables[table.name] = { rows: sum.rows, checksum: sum.value }
        }
        yield JSON.stringify(end) + '\n'
      }
      await pipeline(Readable.from(lines()), createGzip(), createWriteStream(partial, { mode: 0o600 }))
      progress.finish()
      return end
    })
    // Only a whole dump has the file's name.
    renameSync(partial, options.out)
    return {
      file: options.out,
      bytes: statSync(options.out).size,
      tables: Object.entries(trailer.tables).map(([table, t]) => ({ table, rows: t.rows, checksum: t.checksum })),
    }
  } catch (err) {
    rmSync(partial, { force: true })
    throw err
  } finally {
    await db.close()
  }
}

// ---- import ------------------------------------------------------------------------------

export interface ImportOptions {
  file: string
  to: StoreLocation
  env: Env
  replace: boolean
  progress: ProgressOutput
  everySeconds: number
}

export interface TableCheck {
  table: string
  source_rows: number
  target_rows: number
  source_checksum: string
  target_checksum: string
  ok: boolean
}

export interface ImportSummary {
  tables: TableCheck[]
  /** Migrations applied after the rows, when the dump came from an older kigo. */
  upgraded: Record<string, number[]>
}

/** The checks failed: the import was rolled back; the report says where. */
export class ImportMismatch extends Error {
  constructor(readonly summary: ImportSummary, message: string) {
    super(message)
  }
}

/** The lines of a gzip'd dump, one at a time. */
function dumpLines(file: string): AsyncIterator<string> & { close(): void } {
  const input = createReadStream(file).pipe(createGunzip())
  const reader = createInterface({ input, crlfDelay: Infinity })
  const iterator = reader[Symbol.asyncIterator]()
  return Object.assign(iterator, { close: () => { reader.close(); input.destroy() } })
}

function readHeader(line: string | undefined, file: string): DumpHeader {
  let header: Partial<DumpHeader> | undefined
  try {
    header = line === undefined ? undefined : (JSON.parse(line) as Partial<DumpHeader>)
  } catch {
    header = undefined
  }
  if (header?.format !== dumpFormat) throw runError(`${file} is not a kigo dump (made by kigo export)`)
  if (header.version !== dumpFormatVersion) throw runError(`${file} is a dump of format ${String(header.version)}; this kigo (${kigoVersion()}) reads format ${dumpFormatVersion}: import it with the kigo that made it or a newer one`)
  return header as DumpHeader
}

/** Refuses a dump whose schemas this code does not know every migration of (a newer kigo made it). */
function checkVersions(header: DumpHeader): void {
  for (const schema of header.schemas) {
    const known = kigoSchemas.find((s) => s.name === schema.name)
    if (!known) throw runError(`the dump holds a schema ${schema.name} this kigo (${kigoVersion()}) does not know; import it with the kigo that made it (${header.kigo}) or a newer one`)
    const newer = schema.migrations.filter((m) => !known.migrations.some((k) => k.version === m.version && k.name === m.name))
    if (newer.length > 0) {
      throw runError(`the dump's schema ${schema.name} is newer than this kigo (${kigoVersion()}): it has migration ${newer.map((m) => `${m.version} (${m.name})`).join(', ')}; import it with the kigo that made it (${header.kigo}) or a newer one`)
    }
  }
}

/** The Db migrate() expects, running in a transaction already open. */
function within(db: Db, tx: Queryable): Db {
  return { engine: db.engine, query: (sql, params) => tx.query(sql, params), transaction: (fn) => fn(tx), ping: async () => undefined, close: async () => undefined }
}

function sameTables(dump: TableInfo[], target: TableInfo[]): string | null {
  const shape = (t: TableInfo) => `${t.name}(${t.columns.map((c) => `${c.name} ${c.type}`).join(', ')})`
  const want = new Map(dump.map((t) => [t.name, shape(t)]))
  const have = new Map(target.map((t) => [t.name, shape(t)]))
  for (const [name, s] of want) if (have.get(name) !== s) return `the dump has ${s}, the target ${have.get(name) ?? 'no such table'}`
  for (const [name, s] of have) if (!want.has(name)) return `the target has ${s}, the dump no such table`
  return null
}

export async function importStore(options: ImportOptions): Promise<ImportSummary> {
  const { to } = options
  if (!existsSync(options.file)) throw runError(`no such file ${options.file}`)
  const lines = dumpLines(options.file)
  let db: Db | undefined
  try {
    const first = await lines.next().catch((err: Error) => {
      throw runError(`${options.file} is not a kigo dump (${err.message})`)
    })
    const header = readHeader(first.done ? undefined : first.value, options.file)
    checkVersions(header)
    // The key, before anything is written: the target must run with the key the dump's secrets are sealed under.
    const key = secretKeyOf(to, options.env)
    if (key === null) {
      throw runError(`set KIGO_SECRET_KEY to the key the dump's store ran with${to.kind === 'embedded' ? ` (it is then written to ${join(to.dataDir, 'secret-key')})` : ''}; nothing was written`)
    }
    if (!safeEqual(keyCheckValue(key.key), header.key_check)) {
      throw runError(`the dump's secrets are sealed under another key than ${key.from}: set KIGO_SECRET_KEY to the key its store ran with (secrets are moved sealed, never re-encrypted); nothing was written`)
    }
    if (to.kind === 'embedded') {
      mkdirSync(to.dataDir, { recursive: true, mode: 0o700 })
      const keyFile = join(to.dataDir, 'secret-key')
      if (!existsSync(keyFile)) writeFileSync(keyFile, key.key + '\n', { mode: 0o600, flag: 'wx' })
    }
    db = await openStore(to)
    const target = db
    const schemaNames = header.schemas.map((s) => s.name)
    const total = header.tables.reduce((n, t) => n + t.rows, 0)
    return await target.transaction(async (tx) => {
      await canonicalSession(tx)
      const present = (await presentSchemas(tx)).map((s) => s.name).filter((name) => schemaNames.includes(name))
      const holding: string[] = []
      for (const t of await catalogTables(tx, present)) {
        const [row] = await tx.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${ident(t.name)}) AS any`)
        if (row!.any) holding.push(t.name)
      }
      if (holding.length > 0 && !options.replace) {
        throw runError(`${to.label} already holds kigo data (${holding.slice(0, 5).join(', ')}${holding.length > 5 ? ', …' : ''}); nothing was written: stop kigo on it and run the import with --replace to drop that data first`)
      }
      // The schemas as the dump's store had them, the rows, then the migrations it lacked.
      for (const name of schemaNames) await tx.query(`DROP SCHEMA IF EXISTS ${ident(name)} CASCADE`)
      for (const schema of header.schemas) {
        const versions = new Set(schema.migrations.map((m) => m.version))
        await migrate(within(target, tx), schema.name, kigoSchemas.find((s) => s.name === schema.name)!.migrations.filter((m) => versions.has(m.version)))
      }
      const tables = await catalogTables(tx, schemaNames)
      const difference = sameTables(header.tables, tables)
      if (difference !== null) throw runError(`the target's tables at the dump's schema versions differ from the dump's: ${difference}`)
      // Rows go in as they were: no trigger of kigo's own runs on them (the target's
      // foreign keys still hold, tables being written parents first).
      for (const t of tables) await tx.query(`ALTER TABLE ${ident(t.name)} DISABLE TRIGGER USER`)
      // Indexes that back no constraint are built once the rows are in, not row by row.
      const deferred = await tx.query<{ name: string; def: string }>(
        `SELECT i.schemaname || '.' || i.indexname AS name, i.indexdef AS def FROM pg_indexes i
          WHERE i.schemaname = ANY($1::text[])
            AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)`,
        [schemaNames],
      )
      for (const index of deferred) await tx.query(`DROP INDEX ${ident(index.name)}`)
      const progress = new Progress({ what: 'import', total, out: options.progress, everySeconds: options.everySeconds })
      const read = new Map<string, Checksum>()
      let trailer: DumpTrailer | undefined
      let current: { table: TableInfo & { rows: number }; sql: string; rows: string[]; chars: number; limit: number } | undefined
      const flush = async () => {
        if (!current || current.rows.length === 0) return
        await tx.query(current.sql, [`[${current.rows.join(',')}]`])
        progress.add(current.rows.length)
        current.rows = []
        current.chars = 0
      }
      for (;;) {
        const next = await lines.next()
        if (next.done) break
        const line = next.value
        if (line.startsWith('[')) {
          if (!current) throw runError(`${options.file}: a row before any table; the dump is damaged`)
          read.get(current.table.name)!.add(line)
          current.rows.push(line)
          current.chars += line.length
          if (current.rows.length >= current.limit || current.chars >= batchChars) await flush()
          continue
        }
        if (line === '') continue
        const control = JSON.parse(line) as { table?: string; end?: boolean }
        await flush()
        if (control.end === true) {
          trailer = control as DumpTrailer
          break
        }
        const table = header.tables.find((t) => t.name === control.table)
        if (!table) throw runError(`${options.file}: rows of ${String(control.table)}, a table its header does not list; the dump is damaged`)
        read.set(table.name, new Checksum())
        current = { table, sql: insertSql(table), rows: [], chars: 0, limit: table.columns.some((c) => c.type === 'bytea') ? batchRowsWithBytes : batchRows }
      }
      if (!trailer) throw runError(`${options.file} ends before its last line: it was cut off while being written or copied; nothing was written`)
      progress.finish()
      options.progress.write(`import: building ${deferred.length} indexes\n`)
      for (const index of deferred) await tx.query(index.def)
      // Derived tables, at the dump's schema versions (a later migration that adds one fills it).
      const derived = await tx.query<{ name: string }>(
        `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE (n.nspname || '.' || c.relname) = ANY($1::text[]) ORDER BY 1`,
        [Object.keys(rebuiltTables)],
      )
      for (const { name } of derived) {
        options.progress.write(`import: rebuilding ${name} (${rebuiltTables[name]!.what})\n`)
        await tx.query(rebuiltTables[name]!.sql)
      }
      for (const t of tables) await tx.query(`ALTER TABLE ${ident(t.name)} ENABLE TRIGGER USER`)
      for (const s of header.sequences) await tx.query('SELECT setval($1::regclass, $2::bigint, $3::boolean)', [ident(s.name), s.last_value, s.is_called])

      // Nothing lost: every table counted and summed again, as the target stores it.
      const checks: TableCheck[] = []
      for (const table of header.tables) {
        const source = trailer.tables[table.name] ?? { rows: -1, checksum: 'missing' }
        const file = read.get(table.name)
        const stored = await tableChecksum(tx, table)
        const ok = source.rows === table.rows && file !== undefined && file.rows === source.rows && file.value === source.checksum && stored.rows === source.rows && stored.checksum === source.checksum
        checks.push({ table: table.name, source_rows: source.rows, target_rows: stored.rows, source_checksum: source.checksum, target_checksum: stored.checksum, ok })
      }
      const sequences = await sequenceStates(tx, schemaNames)
      const wrongSequences = header.sequences.filter((s) => {
        const now = sequences.find((n) => n.name === s.name)
        return !now || now.last_value !== s.last_value || now.is_called !== s.is_called
      })
      const upgraded: Record<string, number[]> = {}
      const summary: ImportSummary = { tables: checks, upgraded }
      const bad = checks.filter((c) => !c.ok).map((c) => c.table)
      if (bad.length > 0 || wrongSequences.length > 0) {
        throw new ImportMismatch(summary, `${[...bad, ...wrongSequences.map((s) => `sequence ${s.name}`)].join(', ')}: the target does not hold what the dump does; the import was rolled back, nothing was written`)
      }
      for (const schema of kigoSchemas.filter((s) => schemaNames.includes(s.name))) {
        const applied = await migrate(within(target, tx), schema.name, schema.migrations)
        if (applied.length > 0) upgraded[schema.name] = applied
      }
      return summary
    })
  } finally {
    lines.close()
    await db?.close()
  }
}

// ---- the commands ------------------------------------------------------------------------

function checksTable(checks: TableCheck[]): string {
  return formatTable(
    checks.map((c) => ({ table: c.table, source_rows: c.source_rows, target_rows: c.target_rows, source_checksum: c.source_checksum, target_checksum: c.target_checksum, result: c.ok ? 'ok' : 'MISMATCH' })),
    ['table', 'source_rows', 'target_rows', 'source_checksum', 'target_checksum', 'result'],
    'no tables',
  )
}

function stderrOf(io: CommandIo): ProgressOutput {
  return io.stderr
}

export const exportImportCommands: Command[] = [
  {
    group: 'export',
    action: '',
    args: [],
    options: { from: { value: 'DIR|URL', required: true }, out: { value: 'FILE', required: true }, 'progress-every': { value: 'SECONDS' } },
    summary: 'write a whole kigo store (an embedded data directory, or a PostgreSQL URL) to a gzip\'d dump file, in one snapshot; stop kigo first when it is a data directory',
    examples: ['kigo export --from ./data --out kigo.dump.gz', 'kigo export --from postgres://kigo@db.example/kigo --out kigo.dump.gz'],
    async local(input, env, io) {
      const from = storeLocation(input.values.from!, '--from')
      const summary = await exportStore({ from, out: input.values.out!, env, progress: stderrOf(io), everySeconds: everySeconds(input.values, 'export') })
      const rows = summary.tables.reduce((n, t) => n + t.rows, 0)
      io.stdout.write(
        input.json
          ? JSON.stringify(summary) + '\n'
          : formatTable(summary.tables, ['table', 'rows', 'checksum'], 'no tables') + `wrote ${summary.file}: ${rows} rows of ${summary.tables.length} tables, ${summary.bytes} bytes\n`,
      )
      return 0
    },
  },
  {
    group: 'import',
    action: '',
    args: [],
    options: { file: { value: 'FILE', required: true }, to: { value: 'URL|DIR', required: true }, 'progress-every': { value: 'SECONDS' } },
    flags: { replace: 'drop the kigo data the target already holds, then import (without it, a target holding any is refused)' },
    summary: 'load a dump made by kigo export into a PostgreSQL database or a data directory, in one transaction, then check every table\'s rows and checksum against the dump',
    examples: ['kigo import --file kigo.dump.gz --to postgres://kigo@db.example/kigo', 'kigo import --file kigo.dump.gz --to ./data --replace'],
    async local(input, env, io) {
      const to = storeLocation(input.values.to!, '--to')
      try {
        const summary = await importStore({ file: input.values.file!, to, env, replace: input.flags?.has('replace') === true, progress: stderrOf(io), everySeconds: everySeconds(input.values, 'import') })
        const rows = summary.tables.reduce((n, t) => n + t.target_rows, 0)
        const upgraded = Object.entries(summary.upgraded).map(([schema, versions]) => `; ${schema} migrated on to ${versions.join(', ')}`).join('')
        io.stdout.write(input.json ? JSON.stringify(summary) + '\n' : checksTable(summary.tables) + `imported ${rows} rows of ${summary.tables.length} tables into ${to.label}, every table checked${upgraded}\n`)
        return 0
      } catch (err) {
        if (!(err instanceof ImportMismatch)) throw err
        if (!input.json) io.stdout.write(checksTable(err.summary.tables))
        throw runError(err.message)
      }
    },
  },
]
