// One SQL surface over two engines, so the embedded and the production stores are one
// code base (docs/operations.md#modes): PGlite in the data directory, or PostgreSQL from DATABASE_URL.
// Each app keeps its tables in its own schema and writes schema-qualified names.
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { createRequire } from 'node:module'
import type pg from 'pg'
import type { PGlite, Transaction } from '@electric-sql/pglite'
import type { WatchedCalls } from './dependency-watch.js'
import { lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { isConnectionFailure } from './errors.js'

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>
}

export interface Db extends Queryable {
  readonly engine: 'embedded' | 'postgres'
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>
  /** Cheap round trip, for readiness checks. */
  ping(): Promise<void>
  /** Connections of the pool (PostgreSQL): open, idle, and callers waiting for one. */
  poolStats?(): { total: number; idle: number; waiting: number; max: number }
  close(): Promise<void>
}

export interface DbOptions {
  databaseUrl?: string
  dataDir: string
  /** Connections to PostgreSQL at most (10): half pipelined, half pooled for transactions; at least one of each. */
  maxConnections?: number
  /** Deadlines of every PostgreSQL call (the embedded database has no network to wait on). */
  timeouts?: DbTimeouts
  /** Told of every PostgreSQL call's success or connection failure (the outage log). */
  watch?: WatchedCalls
  /** Tracing on (tracing.ts): the database with a span around each statement made inside a trace. */
  traced?: (db: Db) => Db
}

/**
 * A PostgreSQL that is stopped or partitioned away accepts bytes and never answers: without
 * these a request would wait for it forever (issue: a hung dependency hangs kigo).
 * - connectTimeoutMs bounds a new connection and the wait for a free one in the pool;
 * - statementTimeoutMs bounds one statement: on the server (statement_timeout) and in the
 *   client (query_timeout), which also catches a server that answers nothing at all. A
 *   connection whose statement timed out is discarded, never reused.
 */
export interface DbTimeouts {
  connectTimeoutMs: number
  statementTimeoutMs: number
}

export const defaultDbTimeouts: DbTimeouts = { connectTimeoutMs: 2000, statementTimeoutMs: 3000 }

export interface TransactionOptions {
  /**
   * This transaction's own statement deadline, in place of the pool's (which is sized for
   * requests): a migration may build an index or wait for another process's migration.
   */
  statementTimeoutMs?: number
}

/** The statement deadline of migrations: long enough to build an index on a large table, still not forever. */
export const migrationStatementTimeoutMs = 10 * 60_000

// ---- PostgreSQL -------------------------------------------------------------------

/** Most statement texts given a name (the code has a few dozen; this is a safety bound). */
const maxNamedStatements = 512

/**
 * Starts a statement that PostgreSQL must plan for each call with its parameters' values,
 * never with a generic plan: one whose best plan depends on them (an array of a thousand
 * followed users, a window's first ID). Such a statement runs unnamed.
 */
export const planEachCall = '/* planned for each call */ '

/** One pipelined connection and the statements written to it that are not answered yet. */
interface PipelinedConnection {
  client: pg.Client
  inFlight: number
  /** Settles when the connection is open (or could not be opened). */
  opening: Promise<void>
  open: boolean
}

/**
 * The connections that run statements outside a transaction (most requests' only query),
 * in node-postgres's pipeline mode: a statement is written at once, without waiting for the
 * answer to the one before it on its connection. PostgreSQL runs them in order, each
 * closed by its own Sync, so each is its own implicit transaction and its error its own.
 * Beside pg.Pool's check-out and release of a connection for every statement (a promise,
 * a pending item, an idle timer and an error listener each time), one process wakes
 * PostgreSQL and is woken by it less often: several statements go out in one write and
 * their answers come back in one read. Measured against the pool on the same server
 * (docs/performance.md#pipelined-sql-statements): about a third less CPU per statement in this process and in
 * the whole machine, and half as many statements again per second.
 *
 * A statement goes to the open connection with the fewest statements in flight; another
 * connection is opened while every open one is busy, up to `max`. A slow statement holds
 * up only those written behind it on its connection. A connection that fails or ends is
 * forgotten, its statements in flight fail (answered 503 by the apps, as any connection
 * failure), and the next statement opens a new one. Deadlines as the pool's (DbTimeouts):
 * the connect deadline, the server's statement_timeout, and the client's read deadline, past
 * which node-postgres closes the connection (a pipelined connection cannot skip one
 * unanswered statement).
 */
class PipelinedConnections {
  private readonly connections: PipelinedConnection[] = []
  private closed = false

  constructor(
    private readonly Client: typeof pg.Client,
    private readonly config: pg.ClientConfig,
    readonly max: number,
  ) {}

  query(config: pg.QueryConfig): Promise<pg.QueryResult> {
    const connection = this.pick()
    connection.inFlight += 1
    return new Promise((resolve, reject) => {
      // node-postgres's callback form: no promise of its own, no stack captured.
      const settle = (err: Error | null, result?: pg.QueryResult) => {
        connection.inFlight -= 1
        if (err === null) return resolve(result!)
        // A connection that failed (terminated, reset) is not given another statement, even
        // before its socket reports the close. A statement cut off by its deadline (57014)
        // leaves its connection sound.
        if (isConnectionFailure(err) && (err as { code?: unknown }).code !== '57014') this.retire(connection)
        reject(err)
      }
      if (connection.open) connection.client.query(config, settle)
      else connection.opening.then(() => connection.client.query(config, settle), (err: Error) => settle(err))
    })
  }

  /** The least busy open connection, or a new one while all are busy and there is room. */
  private pick(): PipelinedConnection {
    if (this.closed) throw new Error('Connection is closed')
    let best: PipelinedConnection | undefined
    for (const c of this.connections) if (best === undefined || c.inFlight < best.inFlight) best = c
    if (best !== undefined && (best.inFlight === 0 || this.connections.length >= this.max)) return best
    return this.connect()
  }

  private connect(): PipelinedConnection {
    const client = new this.Client({ ...this.config, pipeline: true })
    const connection: PipelinedConnection = { client, inFlight: 0, opening: undefined!, open: false }
    const forget = () => this.forget(connection)
    // Also keeps a connection's failure from being an unhandled 'error' event.
    client.on('error', forget)
    client.on('end', forget)
    connection.opening = client.connect().then(
      () => {
        connection.open = true
      },
      (err: unknown) => {
        forget()
        throw err
      },
    )
    this.connections.push(connection)
    return connection
  }

  private forget(connection: PipelinedConnection): boolean {
    const i = this.connections.indexOf(connection)
    if (i === -1) return false
    this.connections.splice(i, 1)
    return true
  }

  /** No new statement for this connection; it closes once those in flight are answered. */
  private retire(connection: PipelinedConnection): void {
    if (this.forget(connection)) connection.client.end().catch(() => undefined)
  }

  stats(): { total: number; idle: number } {
    let idle = 0
    for (const c of this.connections) if (c.open && c.inFlight === 0) idle += 1
    return { total: this.connections.length, idle }
  }

  async close(): Promise<void> {
    this.closed = true
    const closing = this.connections.splice(0).map((c) => c.client.end().catch(() => undefined))
    await Promise.all(closing)
  }
}

class PostgresDb implements Db {
  readonly engine = 'postgres' as const
  /** Statement text → name: each is parsed and planned once per connection, not per query. */
  private readonly names = new Map<string, string>()
  /**
   * @param pool transactions (a connection of their own from BEGIN to COMMIT), and every
   *   statement when there is no `pipelined`
   * @param pipelined statements outside a transaction (see PipelinedConnections)
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly watch?: DbOptions['watch'],
    private readonly pipelined?: PipelinedConnections,
  ) {}

  /** Tells the watch how a call went; the outcome itself is passed on unchanged. */
  private watched<T>(work: Promise<T>): Promise<T> {
    const watch = this.watch
    if (!watch) return work
    // When the call began: its answer ends an outage only if it was asked after the outage started.
    const began = watch.mark?.()
    // Plain callbacks, not an async function: one promise less on every query.
    return work.then(
      (value) => {
        watch.succeeded(began)
        return value
      },
      (err: unknown) => {
        if (isConnectionFailure(err)) watch.failed(err)
        else watch.succeeded(began)
        throw err
      },
    )
  }

  /**
   * A statement with parameters runs as a named prepared statement: PostgreSQL parses it
   * once per connection and, for the primary-key lookups that make up most requests,
   * stops planning it after a few runs (measured: a large share of the server's CPU per
   * request). Statements without parameters (DDL, pings) and those marked `planEachCall`
   * run unnamed.
   */
  private statement(text: string, values: unknown[]): pg.QueryConfig {
    if (values.length === 0 || text.startsWith(planEachCall)) return { text, values }
    let name = this.names.get(text)
    if (name === undefined && this.names.size < maxNamedStatements) {
      name = `kigo_${this.names.size + 1}`
      this.names.set(text, name)
    }
    return name === undefined ? { text, values } : { name, text, values }
  }

  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const config = this.statement(sql, params)
    return (await this.watched(this.pipelined ? this.pipelined.query(config) : this.pool.query(config))).rows as T[]
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.watched(this.inTransaction(fn, options))
  }

  private async inTransaction<T>(fn: (tx: Queryable) => Promise<T>, options: TransactionOptions): Promise<T> {
    const client = await this.pool.connect()
    let broken: Error | undefined
    // pg-pool takes its error listener off a client it hands out: a connection that ends
    // while checked out would otherwise be an uncaught 'error' event. Its statements fail
    // on their own; the error is kept so the client is released as broken.
    const onError = (err: Error) => {
      broken = err
    }
    client.on('error', onError)
    const timeoutMs = options.statementTimeoutMs
    try {
      await client.query('BEGIN')
      // Both deadlines move: the server's for this transaction only (SET LOCAL), the
      // client's for each of its statements.
      if (timeoutMs !== undefined) await client.query(`SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}`)
      const config = (sql: string, params: unknown[]) => {
        const c = this.statement(sql, params)
        return timeoutMs === undefined ? c : { ...c, query_timeout: timeoutMs }
      }
      const result = await fn({ query: async <R>(sql: string, params: unknown[] = []) => (await client.query(config(sql, params))).rows as R[] })
      await client.query('COMMIT')
      return result
    } catch (err) {
      // After a timeout the connection may still carry the unanswered statement: it is
      // dropped (release with an error), so the transaction can never commit later.
      if (isTimeout(err)) broken = err as Error
      else await client.query('ROLLBACK').catch(() => undefined)
      throw err
    } finally {
      client.removeListener('error', onError)
      client.release(broken)
    }
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1')
  }

  /** Both sets of connections together: the pool's and the pipelined ones. */
  poolStats() {
    const p = this.pipelined?.stats() ?? { total: 0, idle: 0 }
    return {
      total: this.pool.totalCount + p.total,
      idle: this.pool.idleCount + p.idle,
      waiting: this.pool.waitingCount,
      max: (this.pool.options.max ?? 10) + (this.pipelined?.max ?? 0),
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.pipelined?.close()])
  }
}

/** A connect or statement deadline of the pool (see DbTimeouts), as node-postgres reports it. */
export function isTimeout(err: unknown): boolean {
  const message = err instanceof Error ? err.message : ''
  return /timeout|timed out/i.test(message) || (err as { code?: string } | null)?.code === '57014'
}

// ---- PGlite -------------------------------------------------------------------------

// PGlite holds a data directory for one process only, and embedded mode runs both apps
// in that one process: they share one instance, counted so the last close closes it.
const shared = new Map<string, { db: Promise<PGlite>; users: number; lock: DataDirLock }>()

/**
 * PostgreSQL's memory inside PGlite's WebAssembly heap. initdb writes shared_buffers =
 * 128MB, and PGlite touches all of it while starting, so an idle embedded process held
 * 380–500 MB. One process with one connection reads a small database: 8 MB of buffers
 * (1,024 pages, several times the hot set of a small instance; the operating system's
 * page cache holds the rest of the files) brings the idle process under 200 MB and
 * starting faster (docs/performance.md#the-embedded-start). Set on the command line, so an existing data
 * directory needs no change.
 */
const embeddedMemorySettings = ['-c', 'shared_buffers=8MB', '-c', 'max_connections=8']

class EmbeddedDb implements Db {
  readonly engine = 'embedded' as const
  private closed = false
  constructor(private readonly dir: string, private readonly pglite: PGlite) {}

  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pglite.query<T>(sql, params)).rows
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pglite.transaction(async (tx: Transaction) =>
      fn({ query: async <R>(sql: string, params: unknown[] = []) => (await tx.query<R>(sql, params)).rows }),
    )
  }

  async ping(): Promise<void> {
    await this.pglite.query('SELECT 1')
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const entry = shared.get(this.dir)
    if (!entry) return
    entry.users -= 1
    if (entry.users === 0) {
      shared.delete(this.dir)
      try {
        await this.pglite.close()
      } finally {
        entry.lock.release()
      }
    }
  }
}

async function openEmbedded(dataDir: string): Promise<Db> {
  const dir = resolve(dataDir, 'db')
  let entry = shared.get(dir)
  if (!entry) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const lock = lockDataDir(resolve(dataDir))
    const [{ PGlite }, { pg_trgm }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/contrib/pg_trgm')])
    // pg_trgm: the core's migration 3 creates it (for a trigram index that migration 4 replaced
    // with the keywords' suffixes), so a new store still needs it.
    const db = PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, ...embeddedMemorySettings], extensions: { pg_trgm } })
    entry = { db, users: 0, lock }
    shared.set(dir, entry)
  }
  entry.users += 1
  try {
    return new EmbeddedDb(dir, await entry.db)
  } catch (err) {
    shared.delete(dir)
    entry.lock.release()
    throw err
  }
}

/**
 * The project's PostgreSQL layer (named statements, transactions) over a pool the caller
 * made and ends, without pipelined connections: for a tool that measures the pool against
 * them (bench/micro/pg-pipelining.ts).
 */
export function postgresDbOn(pool: pg.Pool): Db {
  return new PostgresDb(pool)
}

/** One PostgreSQL connection's settings: the URL and the deadlines (DbTimeouts) on both sides. */
export function postgresConnectionConfig(databaseUrl: string, t: DbTimeouts): pg.ClientConfig {
  return {
    connectionString: databaseUrl,
    connectionTimeoutMillis: t.connectTimeoutMs,
    query_timeout: t.statementTimeoutMs,
    statement_timeout: t.statementTimeoutMs,
  }
}

export async function openDb(options: DbOptions): Promise<Db> {
  const db = await openUntraced(options)
  return options.traced ? options.traced(db) : db
}

async function openUntraced(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) {
    const t = options.timeouts ?? defaultDbTimeouts
    // pg is loaded here, not with this module: embedded mode never needs it, and loading
    // it was part of the embedded start's cost (docs/performance.md#the-embedded-start).
    const { Pool, Client } = createRequire(import.meta.url)('pg') as typeof import('pg')
    const connection = postgresConnectionConfig(options.databaseUrl, t)
    // maxConnections is shared: half (at least one) pipelined for single statements, the
    // rest (at least one) pooled for transactions.
    const max = options.maxConnections ?? 10
    const pipelinedMax = Math.max(1, Math.floor(max / 2))
    const pool = new Pool({ ...connection, max: Math.max(1, max - pipelinedMax) })
    // An idle client losing its connection must not crash the process; the next query
    // reconnects, and readiness reports the outage meanwhile.
    pool.on('error', () => undefined)
    return new PostgresDb(pool, options.watch, new PipelinedConnections(Client, connection, pipelinedMax))
  }
  return openEmbedded(options.dataDir)
}

// ---- migrations -----------------------------------------------------------------------

export interface Migration {
  version: number
  name: string
  sql: string
}

/**
 * Applies the numbered migrations not yet applied to `schema`, in the order given, in one
 * transaction under an advisory lock, so several processes starting at once apply each
 * migration exactly once (docs/operations.md#stored-data). A migration is known by its
 * version alone (recorded in `schema_migrations`), so a version given twice is refused.
 * Its statements run under the migration deadline, not the requests' one.
 */
export async function migrate(db: Db, schema: string, migrations: readonly Migration[]): Promise<number[]> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`)
  const repeated = migrations.find((m, i) => migrations.findIndex((n) => n.version === m.version) !== i)
  if (repeated) throw new Error(`migration version ${repeated.version} of ${schema} is given twice`)
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`kigo-migrate:${schema}`])
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    )
    const rows = await tx.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`)
    const done = new Set(rows.map((r) => Number(r.version)))
    const applied: number[] = []
    for (const m of migrations) {
      if (done.has(m.version)) continue
      for (const statement of splitStatements(m.sql)) await tx.query(statement)
      await tx.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name])
      applied.push(m.version)
    }
    return applied
  }, { statementTimeoutMs: migrationStatementTimeoutMs })
}

/** Splits a migration into statements at `;` line ends (migrations keep to that form). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s !== '')
}
