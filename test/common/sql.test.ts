// The SQL layer on PostgreSQL: a statement with parameters is prepared once per
// connection under a name and reused, so PostgreSQL does not parse and plan it again for
// every request; a statement without parameters (DDL, pings) is not kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, openDb, type Db } from '../../src/common/sql.js'
import { freshPostgres } from '../helpers/services.js'

const postgres = await freshPostgres()

describe.skipIf(postgres === null)('SQL layer on PostgreSQL', () => {
  let db: Db

  beforeAll(async () => {
    // One connection, so every statement below meets the same session's prepared statements.
    db = await openDb({ databaseUrl: postgres!.url, dataDir: '/nonexistent', maxConnections: 1 })
    await db.query('CREATE TABLE t (id integer PRIMARY KEY, v text NOT NULL)')
  })

  afterAll(async () => {
    await db?.close()
    await postgres?.drop()
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
