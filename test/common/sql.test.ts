// The SQL layer on PostgreSQL: a statement with parameters is prepared once per
// connection under a name and reused, so PostgreSQL does not parse and plan it again for
// every request; a statement without parameters (DDL, pings) is not kept. Statements
// outside a transaction share pipelined connections: each keeps its own answer and its own
// error, and the connections stay within maxConnections and recover from a failure.
import { createServer, type AddressInfo } from 'node:net'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isConnectionFailure } from '../../src/common/errors.js'
import { migrate, openDb, planEachCall, type Db } from '../../src/common/sql.js'
import { freshPostgres } from '../helpers/services.js'

const postgres = await freshPostgres()
afterAll(async () => {
  await postgres?.drop()
})

describe.skipIf(postgres === null)('SQL layer on PostgreSQL', () => {
  let db: Db

  beforeAll(async () => {
    // The least there is: one pipelined connection (every statement outside a transaction
    // below meets the same session's prepared statements) and one for transactions.
    db = await openDb({ databaseUrl: postgres!.url, dataDir: '/nonexistent', maxConnections: 1 })
    await db.query('CREATE TABLE t (id integer PRIMARY KEY, v text NOT NULL)')
  })

  afterAll(async () => {
    await db?.close()
  })

  const prepared = () =>
    db.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements WHERE NOT from_sql ORDER BY name')

  it('prepares a statement with parameters once and reuses it, with each run its own values', async () => {
    const insert = 'INSERT INTO t (id, v) VALUES ($1, $2)'
    const select = 'SELECT v FROM t WHERE id = $1'
    for (let i = 1; i <= 3; i++) await db.query(insert, [i, `value ${i}`])
    expect(await db.query(select, [2])).toEqual([{ v: 'value 2' }])
    expect(await db.query(select, [3])).toEqual([{ v: 'value 3' }])
    const statements = await prepared()
    expect(statements.map((s) => s.statement).sort()).toEqual([insert, select].sort())
    expect(new Set(statements.map((s) => s.name)).size).toBe(2)
  })

  it('uses the same prepared statements inside a transaction', async () => {
    const before = await prepared()
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id, v) VALUES ($1, $2)', [10, 'in a transaction'])
    })
    expect(await db.query('SELECT v FROM t WHERE id = $1', [10])).toEqual([{ v: 'in a transaction' }])
    expect(await prepared()).toEqual(before)
  })

  it('keeps no statement without parameters', async () => {
    await db.query('SELECT count(*) FROM t')
    expect((await prepared()).map((s) => s.statement)).not.toContain('SELECT count(*) FROM t')
  })

  it('never prepares a statement marked planEachCall: each run is planned with its values', async () => {
    const marked = `${planEachCall}SELECT v FROM t WHERE id = ANY ($1::int[]) ORDER BY id`
    for (let i = 0; i < 8; i++) expect(await db.query(marked, [[1, 3]])).toEqual([{ v: 'value 1' }, { v: 'value 3' }])
    expect((await prepared()).map((s) => s.statement)).not.toContain(marked)
    // The same text unmarked is prepared, and after five runs PostgreSQL may plan it generically.
    const unmarked = marked.slice(planEachCall.length)
    for (let i = 0; i < 8; i++) await db.query(unmarked, [[1, 3]])
    expect((await prepared()).map((s) => s.statement)).toContain(unmarked)
  })

  it("runs migrations under their own deadline, not the requests' statement deadline", async () => {
    const db = await openDb({ databaseUrl: postgres!.url, dataDir: '/nonexistent', maxConnections: 1, timeouts: { connectTimeoutMs: 2000, statementTimeoutMs: 300 } })
    try {
      // A request's statement past the deadline is cut off...
      await expect(db.query('SELECT pg_sleep(0.8)')).rejects.toThrow()
      // ...a migration's (an index built on a large table, say) is not.
      const applied = await migrate(db, 'slow_migration', [{ version: 1, name: 'slow', sql: 'CREATE TABLE slow_migration.t (id integer);\nSELECT pg_sleep(0.8);\n' }])
      expect(applied).toEqual([1])
      expect(await db.query('SELECT version FROM slow_migration.schema_migrations')).toEqual([{ version: 1 }])
      // And the request deadline is back for what follows on the same connection.
      await expect(db.query('SELECT pg_sleep(0.8)')).rejects.toThrow()
    } finally {
      await db.close()
    }
  })
})

describe.skipIf(postgres === null)('SQL layer on PostgreSQL: statements outside a transaction, pipelined', () => {
  let admin: pg.Client

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: postgres!.url })
    await admin.connect()
  })

  afterAll(async () => {
    await admin?.end()
  })

  const open = (maxConnections: number, statementTimeoutMs = 3000) =>
    openDb({ databaseUrl: postgres!.url, dataDir: '/nonexistent', maxConnections, timeouts: { connectTimeoutMs: 2000, statementTimeoutMs } })
  /** `run` on a Db of its own, closed afterwards whatever happens. */
  const withDb = async (maxConnections: number, run: (db: Db) => Promise<void>, statementTimeoutMs?: number) => {
    const db = await open(maxConnections, statementTimeoutMs)
    try {
      await run(db)
    } finally {
      await db.close()
    }
  }
  const backendsOf = async (db: Db) => (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, $1::int AS n', [1]))[0]!.pid

  it('answers each of many concurrent statements with its own rows, on no more connections than maxConnections', async () => {
    await withDb(4, async (db) => {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) => db.query<{ n: number; pid: number }>('SELECT $1::int * 2 AS n, pg_backend_pid() AS pid', [i])),
      )
      expect(answers.map((rows) => rows[0]!.n)).toEqual(Array.from({ length: 200 }, (_, i) => i * 2))
      // Half of the four for single statements: 200 statements went over two connections.
      expect(new Set(answers.map((rows) => rows[0]!.pid)).size).toBeLessThanOrEqual(2)
      // And transactions meanwhile, on the other half.
      await Promise.all(Array.from({ length: 6 }, (_, i) => db.transaction((tx) => tx.query('SELECT $1::int AS n', [i]))))
      const stats = db.poolStats!()
      expect(stats.max).toBe(4)
      expect(stats.total).toBeLessThanOrEqual(4)
    })
  })

  it('writes statements behind one still running on the same connection instead of queueing them for a free one', async () => {
    // maxConnections 2: one pipelined connection (and one pooled for transactions).
    await withDb(2, async (db) => {
      const pid = await backendsOf(db)
      const slow = db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.3), $1::int AS n', [1])
      const behind = Array.from({ length: 5 }, (_, i) => db.query<{ pid: number; n: number }>('SELECT pg_backend_pid() AS pid, $1::int AS n', [i]))
      // Nothing waits for a connection (pg.Pool's queue, kigo_core_store_pool_waiting):
      // all six are on the one connection already.
      expect(db.poolStats!()).toMatchObject({ waiting: 0, total: 1, idle: 0 })
      const answers = await Promise.all([slow, ...behind])
      expect(answers.map((rows) => rows[0]!.pid)).toEqual(Array(6).fill(pid))
      expect(answers.slice(1).map((rows) => (rows[0] as { n: number }).n)).toEqual([0, 1, 2, 3, 4])
    })
  })

  it('sends the statements that follow a slow one to another connection, where they do not wait for it', async () => {
    await withDb(4, async (db) => {
      const started = Date.now()
      const slow = db.query('SELECT pg_sleep(1), $1::int AS n', [1])
      const answered: number[] = []
      for (let i = 0; i < 10; i++) answered.push((await db.query<{ n: number }>('SELECT $1::int AS n', [i]))[0]!.n)
      expect(answered).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      expect(Date.now() - started).toBeLessThan(700)
      await slow
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    })
  })

  it("keeps one statement's error its own: those written beside it on the same connection succeed", async () => {
    await withDb(2, async (db) => {
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) => db.query<{ q: number }>('SELECT 10 / $1::int AS q', [i % 10 === 5 ? 0 : 1])),
      )
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []))
      const answered = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value[0]!.q] : []))
      expect(failed).toEqual(Array(3).fill('division by zero'))
      expect(answered).toEqual(Array(27).fill(10))
    })
  })

  it('cuts off a statement past the deadline, and answers the next ones', async () => {
    await withDb(2, async (db) => {
      await expect(db.query('SELECT pg_sleep(0.8)')).rejects.toThrow()
      expect(await db.query<{ n: number }>('SELECT $1::int AS n', [7])).toEqual([{ n: 7 }])
    }, 300)
  })

  it('fails the statements of a connection that dies as a connection failure, and opens a new one for the next', async () => {
    await withDb(2, async (db) => {
      const pid = await backendsOf(db)
      // The outcome is taken at once: the statement may fail before the terminating call
      // returns, and a rejection with no handler yet is an unhandled one.
      const slow = db.query('SELECT pg_sleep(2), $1::int AS n', [1]).then(() => null, (e: Error) => e)
      await new Promise((resolve) => setTimeout(resolve, 100))
      await admin.query('SELECT pg_terminate_backend($1)', [pid])
      const err = await slow
      expect(isConnectionFailure(err)).toBe(true)
      expect(await db.query<{ n: number }>('SELECT $1::int AS n', [8])).toEqual([{ n: 8 }])
      expect(await backendsOf(db)).not.toBe(pid)
    })
  })

  it('reports a server that accepts and never answers as a connection failure at the connect deadline', async () => {
    const silent = createServer(() => undefined)
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as AddressInfo).port
    const db = await openDb({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/x`, dataDir: '/nonexistent', timeouts: { connectTimeoutMs: 200, statementTimeoutMs: 3000 } })
    try {
      const started = Date.now()
      const err = await db.query('SELECT $1::int AS n', [1]).then(() => null, (e: Error) => e)
      expect(Date.now() - started).toBeLessThan(1500)
      expect(isConnectionFailure(err)).toBe(true)
    } finally {
      await db.close()
      silent.close()
    }
  })

  it('refuses a statement after close', async () => {
    const db = await open(2)
    await db.query('SELECT $1::int AS n', [1])
    await db.close()
    await expect(db.query('SELECT $1::int AS n', [1])).rejects.toThrow()
  })
})

describe.skipIf(postgres === null)('SQL layer on PostgreSQL: a transaction whose connection ends', () => {
  it('fails as a connection failure, raises no uncaught error, and the next transaction runs on a new connection', async () => {
    const db = await openDb({ databaseUrl: postgres!.url, dataDir: '/nonexistent', maxConnections: 2 })
    const admin = new pg.Client({ connectionString: postgres!.url })
    await admin.connect()
    try {
      const ended = db.transaction(async (tx) => {
        const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid
        await admin.query('SELECT pg_terminate_backend($1)', [pid])
        await tx.query('SELECT pg_sleep(0.2)')
      })
      const err = await ended.then(() => null, (e: unknown) => e)
      expect(err).not.toBeNull()
      expect(isConnectionFailure(err)).toBe(true)
      // An uncaught 'error' from the ended connection would fail this file; give it time to come.
      await new Promise((r) => setTimeout(r, 200))
      expect(await db.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT 1 AS n'))[0]!.n)).toBe(1)
    } finally {
      await admin.end()
      await db.close()
    }
  })
})
