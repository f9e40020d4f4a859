// What `kigo export` and `kigo import` move (docs/operations.md#moving-to-postgresql), read from the
// database's own catalog: the tables and sequences of kigo's schemas, their columns, the
// migrations applied, and the one canonical text of a row that both the dump and the
// checksums are made of. Where a store is (a data directory or a PostgreSQL URL) and which
// KIGO_SECRET_KEY seals its secrets are decided here too.
import { createHash, createHmac } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DataDirInUse } from '../common/data-dir-lock.js'
import { deriveKey } from '../common/secrets.js'
import { openDb, type Db, type Migration, type Queryable } from '../common/sql.js'
import { coreSchema, migrations as coreMigrations, rebuildKeywordSuffixesSql } from '../core/store/migrations.js'
import { gatewaySchema } from '../gateway/store/index.js'
import { gatewayMigrations } from '../gateway/schema.js'
import { SecretBox } from '../gateway/store/crypto.js'
import { runError, usageError, type Env } from './admin-client.js'

/** kigo's schemas, each with the migrations this code knows, in the order they are moved. */
export const kigoSchemas: ReadonlyArray<{ name: string; migrations: readonly Migration[] }> = [
  { name: coreSchema, migrations: coreMigrations },
  { name: gatewaySchema, migrations: gatewayMigrations },
]

/**
 * Every table of kigo's schemas, named on purpose: an export finding a table that is not
 * here stops (a table added later must be added here, so it can never be left behind
 * unnoticed). Each table's rows are moved whole; `schema_migrations` is carried as the
 * dump's schema versions instead, and re-created by the migrations on the target.
 */
export const movedTables: Readonly<Record<string, string>> = {
  'kigo_core.users': 'public profile copies of registered users, with the version of each name',
  'kigo_core.keywords': 'keywords',
  'kigo_core.entries': 'entries',
  'kigo_core.stars': 'stars',
  'kigo_core.photos': 'photos, their bytes included',
  'kigo_core.user_follows': 'who follows whom',
  'kigo_core.keyword_follows': 'keywords users follow',
  'kigo_core.keyword_relations': 'related keywords',
  'kigo_gateway.users': 'users: login password hashes, sealed API passwords, e-mail, the name version the core acknowledged',
  'kigo_gateway.consumers': 'OAuth applications (sealed secrets)',
  'kigo_gateway.access_tokens': 'OAuth access tokens (sealed secrets), revoked ones too',
  'kigo_gateway.request_tokens': 'OAuth request tokens in flight',
  'kigo_gateway.web_sessions': 'account-page sessions',
  'kigo_gateway.auth_policy': 'the migration policy',
  'kigo_gateway.auth_usage': 'the usage report',
  'kigo_gateway.auth_requests_per_minute': "the dashboard chart's counts",
  'kigo_gateway.audit_log': 'the audit trail',
  'kigo_gateway.app_last_used': 'when each application last acted for its user',
  'kigo_gateway.operator_sessions': 'dashboard sessions',
  'kigo_gateway.user_locks': 'operator locks on users',
  'kigo_gateway.password_resets': 'password reset links',
  'kigo_gateway.login_sites': 'login API sites (sealed secrets)',
  'kigo_gateway.login_certs': 'login API certs',
  'kigo_gateway.oidc_clients': 'OpenID Connect relying parties (sealed secrets)',
  'kigo_gateway.oidc_keys': 'OpenID Connect signing keys (sealed)',
  'kigo_gateway.oidc_state': 'OpenID Connect grants, codes, tokens and sessions',
  'kigo_gateway.email_verifications': 'contact e-mail confirmation links (digests)',
  'kigo_gateway.email_undos': 'links that put a changed contact e-mail back (digests)',
  'kigo_gateway.mail_budgets': 'how many reset and confirmation mails each user and address was sent lately',
  'kigo_gateway.outbox': 'mail waiting, sent or failed (sealed bodies until sent)',
  'kigo_gateway.notices': 'the migration-notice steps each recipient was sent',
  'kigo_gateway.notice_sweeps': "the notices' sweep marks, per method",
  'kigo_gateway.notice_lease': "the notices pass's lease",
  'kigo_gateway.usage_endpoints': 'the last endpoints each legacy client called',
  'kigo_gateway.oauth2_revocations': 'revoked OAuth 2.0 grants whose access tokens may not have expired yet',
  'kigo_gateway.oauth2_applications': 'the OAuth 2.0 client of each OAuth 1.0a application that turned OAuth 2.0 on',
  'kigo_gateway.oauth2_exchanges': 'each exchange of an OAuth 1.0a access token for OAuth 2.0 tokens, with the grant it made',
  'kigo_gateway.oauth1_exchanges': 'the OAuth 1.0a tokens exchanged, one row each (the moved rule)',
}

/**
 * Tables derived from moved ones, as an index is: left out of a dump and made again on the
 * target, by its own SQL, once the rows are in (so they follow the target's lower(), as the
 * trigram index they replaced did).
 */
export const rebuiltTables: Readonly<Record<string, { what: string; sql: string }>> = {
  'kigo_core.keyword_suffixes': { what: "every keyword's suffixes, for keywords/list?word=", sql: rebuildKeywordSuffixesSql },
}

/** The table that holds each schema's applied migrations. */
export const versionsTable = 'schema_migrations'

export interface Column {
  name: string
  /** As format_type writes it: what a value's text is cast to on the way in. */
  type: string
}

export interface TableInfo {
  /** `schema.table`. */
  name: string
  /** Sorted by name, so both sides of a move encode a row alike whatever the column order. */
  columns: Column[]
}

export interface SchemaInfo {
  name: string
  migrations: Array<{ version: number; name: string }>
}

export interface SequenceState {
  name: string
  last_value: string
  is_called: boolean
}

/** A double-quoted identifier. */
export function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** `schema.table` as `"schema"."table"` (kigo's schema and table names hold no dot). */
export function ident(qualified: string): string {
  return qualified.split('.').map(quote).join('.')
}

/** Settings that make a row's text the same on every engine and session (dates in UTC, ISO form). */
export async function canonicalSession(tx: Queryable): Promise<void> {
  await tx.query("SET LOCAL TimeZone = 'UTC'")
  await tx.query("SET LOCAL DateStyle = 'ISO, YMD'")
  await tx.query("SET LOCAL IntervalStyle = 'postgres'")
  await tx.query('SET LOCAL extra_float_digits = 1')
}

/**
 * A row as one line of text: a JSON array of each column's PostgreSQL text (null for
 * NULL), bytea as base64. The text form of every type reads back exactly, so the same
 * SQL encodes the rows for the dump and for the checksum of the target.
 */
export function rowText(table: TableInfo): string {
  const values = table.columns.map((c) => (c.type === 'bytea' ? `translate(encode(${quote(c.name)}, 'base64'), E'\\n', '')` : `${quote(c.name)}::text`))
  return `json_build_array(${values.join(', ')})::text`
}

/** The INSERT that reads a batch of rows (a JSON array of row lines, `$1`) back into the table. */
export function insertSql(table: TableInfo): string {
  const names = table.columns.map((c) => quote(c.name)).join(', ')
  const values = table.columns.map((c, i) => (c.type === 'bytea' ? `decode(r->>${i}, 'base64')` : `(r->>${i})::${c.type}`))
  return `INSERT INTO ${ident(table.name)} (${names}) OVERRIDING SYSTEM VALUE SELECT ${values.join(', ')} FROM json_array_elements($1::json) AS r`
}

/**
 * An order-independent checksum of a table: the sum, modulo 2^64, of the first 64 bits of
 * each row line's MD5. Adding up keeps it independent of the order rows come in, and
 * unlike XOR a row present twice does not cancel out.
 */
export class Checksum {
  private sum = 0n
  rows = 0

  add(line: string): void {
    const digest = createHash('md5').update(line, 'utf8').digest()
    this.sum += digest.readBigUInt64BE(0)
    this.rows += 1
  }

  get value(): string {
    return hex64(this.sum)
  }
}

const hex64 = (n: bigint): string => BigInt.asUintN(64, n).toString(16).padStart(16, '0')

/** The same checksum, computed by the database over a table as it is stored. */
export async function tableChecksum(tx: Queryable, table: TableInfo): Promise<{ rows: number; checksum: string }> {
  const [row] = await tx.query<{ n: string; s: string }>(
    `SELECT count(*)::text AS n, coalesce(sum(('x' || left(md5(${rowText(table)}), 16))::bit(64)::bigint::numeric), 0)::text AS s FROM ${ident(table.name)}`,
  )
  return { rows: Number(row!.n), checksum: hex64(BigInt(row!.s)) }
}

// ---- the catalog ----------------------------------------------------------------------

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** kigo's schemas present in the database, with the migrations applied to each. */
export async function presentSchemas(tx: Queryable): Promise<SchemaInfo[]> {
  const out: SchemaInfo[] = []
  for (const { name } of kigoSchemas) {
    const [exists] = await tx.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`${name}.${versionsTable}`])
    if (!exists?.t) continue
    const rows = await tx.query<{ version: number; name: string }>(`SELECT version, name FROM ${ident(`${name}.${versionsTable}`)} ORDER BY version`)
    out.push({ name, migrations: rows.map((r) => ({ version: Number(r.version), name: r.name })) })
  }
  return out
}

/**
 * The tables of the given schemas, parents before the tables whose foreign keys name
 * them (the order rows are written in), schema_migrations and rebuiltTables left out.
 */
export async function catalogTables(tx: Queryable, schemas: string[]): Promise<TableInfo[]> {
  const tables = await tx.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> $2
        AND NOT (n.nspname || '.' || c.relname) = ANY($3::text[])`,
    [schemas, versionsTable, Object.keys(rebuiltTables)],
  )
  const columns = await tx.query<{ table_name: string; name: string; type: string }>(
    `SELECT n.nspname || '.' || c.relname AS table_name, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''`,
    [schemas],
  )
  const references = await tx.query<{ child: string; parent: string }>(
    `SELECT cn.nspname || '.' || cc.relname AS child, pn.nspname || '.' || pc.relname AS parent
       FROM pg_constraint k
       JOIN pg_class cc ON cc.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = cc.relnamespace
       JOIN pg_class pc ON pc.oid = k.confrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace
      WHERE k.contype = 'f' AND cn.nspname = ANY($1::text[])`,
    [schemas],
  )
  // Sorted here, by code point: the databases' collations may differ.
  const byName = new Map(tables.map((t) => t.name).sort(byCode).map((name) => [name, { name, columns: [] as Column[] }]))
  for (const c of columns) byName.get(c.table_name)?.columns.push({ name: c.name, type: c.type })
  for (const t of byName.values()) t.columns.sort((a, b) => byCode(a.name, b.name))
  const parents = new Map<string, Set<string>>()
  for (const r of references) if (r.child !== r.parent) (parents.get(r.child) ?? parents.set(r.child, new Set()).get(r.child)!).add(r.parent)
  // Depth-first: each table after its parents; the catalog's name order otherwise.
  const ordered: TableInfo[] = []
  const placed = new Set<string>()
  const place = (name: string, path: string[]) => {
    if (placed.has(name)) return
    if (path.includes(name)) throw runError(`the foreign keys of ${path.join(' → ')} → ${name} form a loop; kigo export cannot order them`)
    for (const parent of parents.get(name) ?? []) if (byName.has(parent)) place(parent, [...path, name])
    placed.add(name)
    ordered.push(byName.get(name)!)
  }
  for (const name of byName.keys()) place(name, [])
  return ordered
}

/** The sequences of the given schemas with their state (a sequence is not part of any snapshot: read it after the rows it numbers). */
export async function sequenceStates(tx: Queryable, schemas: string[]): Promise<SequenceState[]> {
  const names = await tx.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1::text[]) AND c.relkind = 'S'`,
    [schemas],
  )
  const out: SequenceState[] = []
  for (const name of names.map((n) => n.name).sort(byCode)) {
    const [state] = await tx.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text AS last_value, is_called FROM ${ident(name)}`)
    out.push({ name, last_value: state!.last_value, is_called: state!.is_called })
  }
  return out
}

/** Tables of kigo's schemas that movedTables does not name. */
export function uncoveredTables(tables: TableInfo[]): string[] {
  return tables.map((t) => t.name).filter((name) => !(name in movedTables))
}

// ---- where a store is ------------------------------------------------------------------

export type StoreLocation = { kind: 'postgresql'; url: string; label: string } | { kind: 'embedded'; dataDir: string; label: string }

/** `postgres://…` or `postgresql://…` is a PostgreSQL database; anything else a data directory. */
export function storeLocation(value: string, option: string): StoreLocation {
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw usageError(`${option}: not a PostgreSQL URL: ${JSON.stringify(redactUrl(value))}`)
    }
    return { kind: 'postgresql', url: value, label: `PostgreSQL ${url.host}${url.pathname}` }
  }
  if (value.trim() === '') throw usageError(`${option}: a data directory or a postgres:// URL is needed`)
  const dataDir = resolve(value)
  return { kind: 'embedded', dataDir, label: `data directory ${dataDir}` }
}

/** A URL without its password, for messages. */
function redactUrl(value: string): string {
  return value.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')
}

/** Whether an embedded store exists in the data directory (its database was ever created). */
export function embeddedExists(dataDir: string): boolean {
  return existsSync(join(dataDir, 'db', 'PG_VERSION'))
}

/** Opens the store for one long transaction: no statement deadline, one connection. */
export async function openStore(location: StoreLocation): Promise<Db> {
  const timeouts = { connectTimeoutMs: 10_000, statementTimeoutMs: 0 }
  let db: Db
  try {
    db = location.kind === 'postgresql'
      ? await openDb({ databaseUrl: location.url, dataDir: '', maxConnections: 2, timeouts })
      : await openDb({ dataDir: location.dataDir })
  } catch (err) {
    if (err instanceof DataDirInUse) throw runError(`${err.message}; nothing was read or written`)
    throw err
  }
  try {
    await db.ping()
  } catch (err) {
    await db.close().catch(() => undefined)
    throw runError(`cannot open ${location.label}: ${(err as Error).message}`)
  }
  return db
}

// ---- the secret key --------------------------------------------------------------------

export interface SecretKeySource {
  key: string
  /** Where it came from, for messages. */
  from: string
}

/**
 * The KIGO_SECRET_KEY a store's secrets are sealed under, found as kigo finds it: the
 * environment variable, else (a data directory) its secret-key file. Null when neither.
 */
export function secretKeyOf(location: StoreLocation, env: Env): SecretKeySource | null {
  const fromEnv = env.KIGO_SECRET_KEY
  const file = location.kind === 'embedded' ? join(location.dataDir, 'secret-key') : undefined
  const fileKey = file !== undefined && existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined
  if (fromEnv !== undefined && fromEnv !== '') {
    checkKeyShape(fromEnv, 'KIGO_SECRET_KEY')
    if (fileKey !== undefined && fileKey !== fromEnv.trim()) {
      throw runError(`KIGO_SECRET_KEY is not the key in ${file}; kigo would use one and then the other: make them the same, or unset KIGO_SECRET_KEY`)
    }
    return { key: fromEnv.trim(), from: 'KIGO_SECRET_KEY' }
  }
  if (fileKey !== undefined) {
    checkKeyShape(fileKey, file!)
    return { key: fileKey, from: file! }
  }
  return null
}

function checkKeyShape(key: string, from: string): void {
  const bytes = Buffer.from(key.trim(), 'base64')
  if (bytes.length !== 32 || bytes.toString('base64') !== key.trim()) throw runError(`${from}: a secret key must be 32 bytes, base64-encoded`)
}

/**
 * A value that tells whether two keys are the same without revealing either: an HMAC of a
 * fixed label under a key derived for this purpose alone.
 */
export function keyCheckValue(key: string): string {
  return createHmac('sha256', deriveKey(key, 'dump key check')).update('kigo dump key check v1').digest('base64url')
}

/**
 * Opens one sealed value of the store (a user's API password) with the key, so that a
 * dump never records a key its secrets are not sealed under. True when the store has no
 * user yet.
 */
export async function keyOpensStore(tx: Queryable, key: string, schemas: string[]): Promise<boolean> {
  if (!schemas.includes(gatewaySchema)) return true
  const [row] = await tx.query<{ id: string; api_password: string }>(`SELECT id, api_password FROM ${ident(`${gatewaySchema}.users`)} ORDER BY id LIMIT 1`)
  if (!row) return true
  try {
    new SecretBox(key).open(row.api_password, `users.api_password:${row.id}`)
    return true
  } catch {
    return false
  }
}
