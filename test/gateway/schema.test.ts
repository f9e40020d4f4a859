// The gateway schema's migrations, kept by the folders that own their tables and applied
// in src/gateway/schema.ts's order: a database records applied migrations by version
// (schema_migrations), so the versions and names must be those every release so far
// recorded, and a database migrated the way earlier releases did (all of them in version
// order, from one list) must open without anything applied again and end with the very
// tables, columns, constraints and indexes a fresh one gets. On both storage backends.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { expect, it } from 'vitest'
import { migrate, openDb, type Db, type Migration } from '../../src/common/sql.js'
import { gatewayMigrations } from '../../src/gateway/schema.js'
import { openIdentityStore } from '../../src/gateway/identity.js'
import { gatewaySchema } from '../../src/gateway/store/migrations.js'
import { describeEachBackend, storageBackends } from '../helpers/backends.js'
import { embeddedDataDir } from '../helpers/embedded-template.js'

/** What schema_migrations holds in a gateway database migrated by any release before the migrations were split by folder. */
const recordedBefore: Array<[number, string]> = [
  [1, 'users, consumers, access tokens'],
  [2, 'request tokens and web sessions (OAuth provider, account pages)'],
  [10, 'migration policy per legacy method'],
  [11, 'auth usage report and per-minute request counts'],
  [12, 'usage outcomes per row and per minute'],
  [30, 'audit trail of operator changes'],
  [31, 'contact e-mail per user'],
  [32, 'when each authorized application last acted for its user'],
  [33, 'operator dashboard sessions'],
  [34, 'operator locks on users'],
  [35, 'password reset links'],
  [40, 'login API: sites and their certs; login_api under the migration policy'],
  [50, 'OpenID Connect relying parties, signing keys and provider state'],
]

/** Migrations added since, in version order. */
const addedSince: Array<[number, string]> = [
  [13, 'usage rows name a login-API site or OpenID Connect client by its identity; when a row was first refused'],
  [36, 'who made each audited change'],
  [37, 'contact e-mail confirmation links'],
  [38, "the deployment of each usage row's latest request"],
  [60, 'mail outbox'],
  [61, 'registered users sent to the core'],
  [70, 'migration notices: the steps each recipient was told, sweeps and the sender lease'],
  [71, 'the last endpoints each legacy client called'],
  [72, 'the refusal date each notice told, and a notice when that date moves earlier'],
  [73, 'usage rows written before sites were told apart by identity: their site or client, where the name names one'],
  [80, "a consumer's previous secret, working until it expires"],
  [81, "a login site's previous secret, working until it expires"],
  [82, "an OpenID Connect client's previous secret, working until it expires"],
  [83, 'application home pages; unrevoked tokens by application and user'],
  [84, 'login site home pages'],
  [85, 'OpenID Connect grants by client'],
  [90, 'a new secret held for the one page that shows it'],
  [91, 'mail budgets'],
  [92, 'links that undo a change of contact e-mail'],
  [110, 'OAuth 2.0: revoked grants, the API scopes an OpenID Connect client may ask for'],
  [93, 'OAuth 1.0a (oauth1) under the migration policy'],
  [94, 'OAuth 1.0a tokens exchanged for OAuth 2.0 grants'],
  [111, 'OAuth 2.0 for OAuth 1.0a applications: the client of each application, and each token exchanged'],
]
const recorded = [...recordedBefore, ...addedSince].sort((a, b) => a[0] - b[0])

const byVersion = (migrations: readonly Migration[]) => [...migrations].sort((a, b) => a.version - b.version)

it('keeps the version and name of every migration a database has recorded', () => {
  expect(byVersion(gatewayMigrations).map((m) => [m.version, m.name])).toEqual(recorded)
})

/** The schema as PostgreSQL describes it: columns, constraints and indexes, in a stable order. */
async function catalog(db: Db): Promise<unknown> {
  const columns = await db.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
      WHERE table_schema = $1 ORDER BY table_name, column_name`,
    [gatewaySchema],
  )
  const constraints = await db.query(
    `SELECT c.conrelid::regclass::text AS on_table, c.conname, pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c
      JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 ORDER BY on_table, c.conname`,
    [gatewaySchema],
  )
  const indexes = await db.query('SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname', [gatewaySchema])
  const recorded = await db.query<{ version: number; name: string }>(`SELECT version, name FROM ${gatewaySchema}.schema_migrations ORDER BY version`)
  return { columns, constraints, indexes, recorded: recorded.map((r) => [Number(r.version), r.name]) }
}

describeEachBackend('a gateway database migrated before the migrations were split by folder', await storageBackends('schema'), (setup) => {
  it('opens without a migration applied again, with the schema a fresh database gets', async () => {
    const before = await setup()
    const fresh = await setup()
    const oldDb = await openDb(before)
    const freshDb = await openDb(fresh)
    try {
      // What earlier releases did: one list, applied in version order.
      expect(await migrate(oldDb, gatewaySchema, byVersion(gatewayMigrations))).toEqual(recorded.map(([v]) => v))
      expect(await migrate(oldDb, gatewaySchema, gatewayMigrations)).toEqual([])

      expect(await migrate(freshDb, gatewaySchema, gatewayMigrations)).toEqual(gatewayMigrations.map((m) => m.version))
      const expected = await catalog(freshDb)
      expect((expected as { recorded: unknown }).recorded).toEqual(recorded)
      expect(await catalog(oldDb)).toEqual(expected)
    } finally {
      await oldDb.close()
      await freshDb.close()
      await fresh.cleanup()
    }
    try {
      const store = await openIdentityStore({ ...before, secretKey: randomBytes(32).toString('base64'), migrations: gatewayMigrations })
      await store.close()
    } finally {
      await before.cleanup()
    }
  }, 180_000)

  it('applies the migrations it lacks, in the declared order, to one migrated up to an earlier release', async () => {
    const earlier = await setup()
    const db = await openDb(earlier)
    try {
      // A release that had migrations up to 34, in version order.
      const shipped = byVersion(gatewayMigrations).filter((m) => m.version <= 34)
      await migrate(db, gatewaySchema, shipped)
      // In the lists' order (src/gateway/schema.ts, by first version): the identity store's 61 and 90 first, the usage report's 38 and 94, the audit's 36, …, OAuth 1.0a's 80 and 83
      expect(await migrate(db, gatewaySchema, gatewayMigrations)).toEqual([61, 90, 38, 94, 36, 35, 37, 92, 40, 81, 84, 50, 82, 85, 60, 91, 70, 71, 72, 73, 80, 83, 93, 110, 111])
      expect(((await catalog(db)) as { recorded: unknown }).recorded).toEqual(recorded)
    } finally {
      await db.close()
      await earlier.cleanup()
    }
  }, 120_000)
})

it('refuses a list that gives one version twice', async () => {
  const dataDir = embeddedDataDir('schema-twice')
  const db = await openDb({ dataDir })
  try {
    const twice = [...gatewayMigrations, { version: 10, name: 'another table under a taken version', sql: 'CREATE TABLE kigo_gateway.other (id integer);' }]
    await expect(migrate(db, gatewaySchema, twice)).rejects.toThrow(/version 10 .* twice/)
    expect(await db.query(`SELECT to_regclass('${gatewaySchema}.users') AS users`)).toEqual([{ users: null }])
  } finally {
    await db.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}, 60_000)
