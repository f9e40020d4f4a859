// A gateway database whose usage rows were written before sites were told apart by
// identity (docs/gateway.md#the-usage-report), upgraded, on each storage backend: a
// login-API or OpenID Connect row whose name names exactly one site (one client) becomes
// that site's (client's), with its owner; a row of a name two sites share stays nobody's;
// a row refused before is taken as refused since its last request.
import { expect, it } from 'vitest'
import { migrate, openDb } from '../../../src/common/sql.js'
import { gatewayMigrations } from '../../../src/gateway/schema.js'
import { gatewaySchema } from '../../../src/gateway/store/migrations.js'
import { UsageStore } from '../../../src/gateway/usage/store.js'
import { describeEachBackend, storageBackends } from '../../helpers/backends.js'

const seen = '2030-01-02T03:04:05.000Z'

describeEachBackend('usage rows written before sites were known by identity', await storageBackends('usage-identity'), (setup) => {
  it('are matched to their site or client where the name names one, and to nobody where two share it', async () => {
    const where = await setup()
    const db = await openDb(where)
    try {
      const added = [13, 73]
      await migrate(db, gatewaySchema, gatewayMigrations.filter((m) => !added.includes(m.version)))
      await db.query(`INSERT INTO kigo_gateway.users (id, name, password_hash, api_password) VALUES ('alice', 'Alice', 'x', 'x'), ('mallory', 'Mallory', 'x', 'x')`)
      await db.query(
        `INSERT INTO kigo_gateway.login_sites (api_key, secret, name, owner_id, callback_url) VALUES
           ('k-solo', 's', 'Solo', 'alice', 'https://a.example/cb'), ('k-twin-a', 's', 'Twin', 'alice', 'https://a.example/cb'), ('k-twin-m', 's', 'Twin', 'mallory', 'https://m.example/cb')`,
      )
      await db.query(`INSERT INTO kigo_gateway.oidc_clients (client_id, name, owner_id, redirect_uris) VALUES ('c-solo', 'Solo', 'alice', '{https://a.example/cb}')`)
      await db.query(
        `INSERT INTO kigo_gateway.auth_usage (method, user_id, client, count, accepted, refused_by_policy, first_seen, last_seen) VALUES
           ('login_api', 'bob', 'Solo', 1, 1, 0, $1, $1), ('login_api', 'bob', 'Twin', 1, 1, 0, $1, $1),
           ('oidc', 'bob', 'Solo', 1, 1, 0, $1, $1), ('basic', 'bob', 'curl/8', 3, 1, 2, $1, $1)`,
        [seen],
      )
      expect(await migrate(db, gatewaySchema, gatewayMigrations)).toEqual(added)

      const rows = await new UsageStore(db).list({ user: 'bob' })
      const view = rows.map((r) => [r.method, r.client, r.clientId, r.owner, r.firstRefused === null ? null : new Date(r.firstRefused).toISOString()]).sort()
      expect(view).toEqual([
        ['basic', 'curl/8', '', null, seen],
        ['login_api', 'Solo', 'k-solo', 'alice', null],
        ['login_api', 'Twin', '', null, null],
        ['oidc', 'Solo', 'c-solo', 'alice', null],
      ])
    } finally {
      await db.close()
      await where.cleanup()
    }
  }, 120_000)
})
