// The migration notices' pass on a large store (docs/performance.md#migration-notices):
// a fresh PostgreSQL database seeded from SQL with N users (default 10⁵), each with one
// Basic usage row seen in the last 10 days and a contact e-mail, Basic deprecated with a
// deny scheduled 20 days ahead. Then, timed, the passes a deployment goes through:
//   1. the announcement to every user (N messages queued in the outbox);
//   2. a pass with nothing due and nothing used since (the steady state);
//   3. a pass after 1,000 users made a request (read: those users only; nothing new due);
//   4. the pass that crosses "7 days before the deny" (the whole lookback read once; the
//      1,000 who used Basic since their announcement are reminded).
// Mail is not sent (no SMTP server): the outbox only records, as it does without one.
//
//   npm run build && node dist/bench/notices-pass.js [--users 100000] [--database postgres://…]
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../src/common/config.js'
import { openDb } from '../src/common/sql.js'
import { openOutbox } from '../src/gateway/mail/index.js'
import { Notices } from '../src/gateway/notices/index.js'
import { PolicyService } from '../src/gateway/policy/service.js'
import { PolicyStore } from '../src/gateway/policy/store.js'
import { gatewayMigrations } from '../src/gateway/schema.js'
import { identityStoreOn } from '../src/gateway/store/index.js'
import { createBenchDatabase } from './topology.js'

const day = 86_400_000

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1] ?? fallback
}

async function main(): Promise<void> {
  const users = Number(option('users', '100000'))
  const base = option('database', process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
  const database = await createBenchDatabase(base)
  const secretKey = randomBytes(32).toString('base64')
  let clock = Date.parse('2030-06-01T00:00:00Z')
  const now = () => clock
  const config = loadConfig({ env: { KIGO_DATA_DIR: '/nonexistent', DATABASE_URL: database.url, KIGO_SECRET_KEY: secretKey, KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url') }, overrides: { notices: { intervalSeconds: 0 } } })
  const db = await openDb({ databaseUrl: database.url, dataDir: '/nonexistent', maxConnections: 14 })
  const store = await identityStoreOn(db, secretKey, gatewayMigrations)
  try {
    const seedStarted = performance.now()
    await db.query(
      `INSERT INTO kigo_gateway.users (id, name, password_hash, api_password, email)
       SELECT 'user' || g, 'User ' || g, 'x', 'x', 'user' || g || '@example.test' FROM generate_series(1, $1) AS g`,
      [users],
    )
    // Every user's one Basic client, last seen 1 hour to 10 days before the first pass.
    await db.query(
      `INSERT INTO kigo_gateway.auth_usage (method, user_id, client, count, accepted, first_seen, last_seen)
       SELECT 'basic', 'user' || g, 'Tool' || (g % 50) || '/1.' || (g % 7), 20, 20,
              $2::timestamptz - interval '20 days', $2::timestamptz - interval '1 hour' - (g % 864) * interval '1000 seconds'
       FROM generate_series(1, $1) AS g`,
      [users, new Date(clock).toISOString()],
    )
    await db.query('ANALYZE')
    const seedMs = performance.now() - seedStarted

    const policy = new PolicyService(new PolicyStore(db), { guideUrl: 'https://kigo.example/migration', now })
    await policy.start()
    await policy.update({ basic: { state: 'deprecate', schedule: [{ state: 'deny', from: new Date(clock + 20 * day).toISOString() }] } })
    const outbox = openOutbox(db, { ...config, mail: { ...config.mail, smtpUrl: null } }, { transport: null, now })
    const notices = new Notices({ config, db, policy, outbox, now })

    const timed = async (what: string) => {
      const started = performance.now()
      const result = await notices.sender.decide()
      const ms = performance.now() - started
      console.log(`${what.padEnd(58)} ${ms.toFixed(0).padStart(7)} ms  users read ${String(result.read).padStart(6)}  messages queued ${result.queued}`)
      return { ms, ...result }
    }
    console.log(`seeded ${users} users and Basic usage rows in ${(seedMs / 1000).toFixed(1)} s`)
    clock += 60_000
    await timed('1. announcement to every user')
    clock += 5 * 60_000
    await timed('2. nothing due, nothing used since')
    clock += 10 * 60_000
    // 1,000 users make a Basic request (their rows' last_seen moves, as the usage flush does).
    await db.query(`UPDATE kigo_gateway.auth_usage SET last_seen = $1, accepted = accepted + 1, count = count + 1 WHERE method = 'basic' AND user_id IN (SELECT 'user' || g FROM generate_series(1, 1000) AS g)`, [new Date(clock - 1000).toISOString()])
    await timed('3. after 1,000 users used Basic again (nothing new due)')
    clock += 13 * day
    await db.query(`UPDATE kigo_gateway.auth_usage SET last_seen = $1 WHERE method = 'basic' AND user_id IN (SELECT 'user' || g FROM generate_series(1, 1000) AS g)`, [new Date(clock - 60_000).toISOString()])
    await timed('4. crossing 7 days before the deny (whole lookback read)')
    clock += 5 * 60_000
    await timed('5. nothing due again')
    policy.close()
    await notices.close()
    await outbox.close()
  } finally {
    await store.close().catch(() => undefined)
    await db.close().catch(() => undefined)
    await database.drop()
  }
}

await main()
