// Real PostgreSQL and Redis for the contract suites. Outside CI a missing service skips
// those suites with a printed reason; under CI=true it fails the run instead.
import { randomBytes } from 'node:crypto'
import { createConnection } from 'node:net'
import pg from 'pg'

export const inCi = process.env.CI === 'true' || process.env.CI === '1'
export const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

function unavailable(name: string, err: unknown): null {
  const reason = `${name} is not answering (${(err as Error).message})`
  if (inCi) throw new Error(`${reason}; under CI=true this fails the run`)
  console.warn(`skipping ${name} suites: ${reason}`)
  return null
}

/** True when PostgreSQL answers; false (skip) when it is absent outside CI. */
export async function availablePostgres(): Promise<boolean> {
  const admin = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 })
  try {
    await admin.connect()
  } catch (err) {
    return unavailable('PostgreSQL', err) ?? false
  }
  await admin.end()
  return true
}

/** A fresh, empty PostgreSQL database for one suite; null (skip) when PostgreSQL is absent outside CI. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const admin = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 })
  try {
    await admin.connect()
  } catch (err) {
    return unavailable('PostgreSQL', err)
  }
  const name = `kigo_t_${randomBytes(6).toString('hex')}`
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(postgresUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: postgresUrl })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

/** The Redis URL when Redis answers; null (skip) when it is absent outside CI. */
export async function availableRedis(url = redisUrl): Promise<string | null> {
  const { hostname, port } = new URL(url)
  try {
    await new Promise<void>((resolve, reject) => {
      const socket = createConnection({ host: hostname, port: Number(port || 6379) })
      socket.setTimeout(3000, () => socket.destroy(new Error('timed out')))
      socket.once('connect', () => socket.write('PING\r\n'))
      socket.once('data', (d) => {
        socket.end()
        if (d.toString().startsWith('+PONG')) resolve()
        else reject(new Error(d.toString().trim()))
      })
      socket.once('error', reject)
    })
    return url
  } catch (err) {
    return unavailable('Redis', err)
  }
}
