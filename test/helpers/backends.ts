// Every backend a contract suite runs against, in one place: storage (the embedded
// database in a fresh temporary directory, PostgreSQL in a fresh database; also as the
// identity store's options and as a migrated gateway database), the replay cache and the
// failure throttle (memory, Redis, and the decorators the gateway wraps Redis in), and the
// credential lookup (the identity store read directly, and through its cache). A
// decorator is listed as a backend of its own because it must keep the contract of what
// it wraps. A backend whose service is absent has no setup: outside CI its suite is
// skipped with the reason services.ts printed; under CI=true that check fails the run.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { afterAll, beforeAll, describe } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../src/common/redis.js'
import { migrate, openDb, type Db } from '../../src/common/sql.js'
import type { CredentialLookup } from '../../src/gateway/domain/auth.js'
import { MemoryReplayCache } from '../../src/gateway/replay/memory.js'
import { RedisReplayCache } from '../../src/gateway/replay/redis.js'
import { ResilientReplayCache } from '../../src/gateway/replay/resilient.js'
import type { ReplayCache } from '../../src/gateway/replay/types.js'
import { CachedFailureThrottle } from '../../src/gateway/throttle/cached.js'
import { MemoryFailureThrottle } from '../../src/gateway/throttle/memory.js'
import { RedisFailureThrottle } from '../../src/gateway/throttle/redis.js'
import { ResilientFailureThrottle } from '../../src/gateway/throttle/resilient.js'
import type { FailureThrottle, ThrottleSettings } from '../../src/gateway/throttle/types.js'
import { gatewayMigrations } from '../../src/gateway/schema.js'
import { gatewaySchema } from '../../src/gateway/store/migrations.js'
import { CachedCredentialLookup, storeCredentialLookup, type IdentityStoreOptions, type SqlIdentityStore } from '../../src/gateway/store/index.js'
import { openIdentityStore } from '../../src/gateway/identity.js'
import { embeddedDataDir } from './embedded-template.js'
import { availablePostgres, availableRedis, freshPostgres } from './services.js'

/** What a backend's setup hands to its suite; `cleanup` undoes the setup. */
export interface Opened {
  cleanup: () => Promise<void>
}

export interface Backend<T extends Opened> {
  name: string
  /** Null when the backend's service is absent outside CI (the suite is skipped). */
  setup: (() => Promise<T>) | null
}

/**
 * One describe block per backend (`title (name)`), skipped when the backend is absent;
 * `body` gets the backend's setup, to call as often as it needs fresh instances.
 */
export function describeEachBackend<T extends Opened>(title: string, backends: Array<Backend<T>>, body: (setup: () => Promise<T>, name: string) => void): void {
  for (const { name, setup } of backends) describe.skipIf(setup === null)(`${title} (${name})`, () => body(setup!, name))
}

/**
 * As describeEachBackend, with the backend set up once before the block's tests and
 * cleaned up after them; `body` reads it through `current()` from its hooks and tests.
 * After-hooks run in reverse order (vitest's default `sequence.hooks: 'stack'`), so what
 * `body` closes in its own afterAll is closed before the backend is cleaned up.
 */
export function describeBackends<T extends Opened>(title: string, backends: Array<Backend<T>>, body: (current: () => T, name: string) => void): void {
  describeEachBackend(title, backends, (setup, name) => {
    let opened: T | undefined
    beforeAll(async () => {
      opened = await setup()
    })
    afterAll(async () => {
      await opened?.cleanup()
    })
    body(() => opened!, name)
  })
}

// ---- storage ----------------------------------------------------------------------------

export interface StorageBackend extends Opened {
  databaseUrl?: string
  dataDir: string
}

/** The embedded database and PostgreSQL, each set up afresh (a new directory holding a blank database, a new database). */
export async function storageBackends(label: string): Promise<Array<Backend<StorageBackend>>> {
  const postgres = await availablePostgres()
  return [
    {
      name: 'embedded',
      setup: async () => {
        const dataDir = embeddedDataDir(label)
        return { dataDir, cleanup: async () => rmSync(dataDir, { recursive: true, force: true }) }
      },
    },
    {
      name: 'postgres',
      setup: postgres
        ? async () => {
            const db = await freshPostgres()
            if (!db) throw new Error('PostgreSQL stopped answering during the run')
            // A directory that does not exist: PostgreSQL mode must not write to disk.
            return { databaseUrl: db.url, dataDir: '/nonexistent', cleanup: () => db.drop() }
          }
        : null,
    },
  ]
}

export interface GatewayDbBackend extends Opened {
  /** A connection to a fresh gateway database, migrated. */
  db: Db
}

/** The gateway's database on each storage backend, for the stores that take a Db (policy, audit, usage). */
export async function gatewayDbBackends(label: string): Promise<Array<Backend<GatewayDbBackend>>> {
  return (await storageBackends(label)).map(({ name, setup }) => ({
    name,
    setup:
      setup &&
      (async () => {
        const where = await setup()
        const db = await openDb(where)
        await migrate(db, gatewaySchema, gatewayMigrations)
        return {
          db,
          cleanup: async () => {
            await db.close()
            await where.cleanup()
          },
        }
      }),
  }))
}

/** The identity store's options on each backend, with a fresh master key (gateway store suites). */
export interface IdentityStoreBackend extends Opened {
  options: IdentityStoreOptions
}

export async function identityStoreBackends(label: string): Promise<Array<Backend<IdentityStoreBackend>>> {
  return (await storageBackends(label)).map(({ name, setup }) => ({
    name,
    setup:
      setup &&
      (async () => {
        const { cleanup, ...where } = await setup()
        return { options: { ...where, secretKey: randomBytes(32).toString('base64'), migrations: gatewayMigrations }, cleanup }
      }),
  }))
}

export interface OpenedIdentityStore {
  backend: IdentityStoreBackend
  store: SqlIdentityStore
  /** A plain connection to the same database, for looking at what the store wrote. */
  raw: Db
}

/**
 * Opens an identity store on `setup`'s backend before the suite's tests (handing it to
 * `use`) and closes everything after them.
 */
export function openIdentityStoreForSuite(setup: () => Promise<IdentityStoreBackend>, use: (opened: OpenedIdentityStore) => void): void {
  let opened: Partial<OpenedIdentityStore> = {}
  beforeAll(async () => {
    const backend = await setup()
    opened = { backend, store: await openIdentityStore(backend.options), raw: await openDb(backend.options) }
    use(opened as OpenedIdentityStore)
  })
  afterAll(async () => {
    await opened.store?.close()
    await opened.raw?.close()
    await opened.backend?.cleanup()
  })
}

// ---- credential lookup -------------------------------------------------------------------

/** The store the lookup reads, as CachedCredentialLookup takes it. */
type LookupSource = ConstructorParameters<typeof CachedCredentialLookup>[0]

/** The answers the verifiers get, read from the store on every call: what the cache must agree with. */
export const directCredentialLookup = (store: LookupSource): CredentialLookup => storeCredentialLookup(store)

export interface CredentialLookupBackend extends Opened {
  /** The store the credentials are written through (this process's). */
  store: SqlIdentityStore
  lookup: CredentialLookup
}

/** The direct lookup and the cached one (as the gateway builds it), on each storage backend. */
export async function credentialLookupBackends(label: string): Promise<Array<Backend<CredentialLookupBackend>>> {
  const kinds: Array<[string, (store: SqlIdentityStore) => CredentialLookup & { dispose?: () => void }]> = [
    ['direct', directCredentialLookup],
    ['cached', (store) => new CachedCredentialLookup(store)],
  ]
  return (await identityStoreBackends(label)).flatMap(({ name, setup }) =>
    kinds.map(([kind, make]) => ({
      name: `${kind}, ${name}`,
      setup:
        setup &&
        (async () => {
          const backend = await setup()
          const store = await openIdentityStore(backend.options)
          const lookup = make(store)
          return {
            store,
            lookup,
            cleanup: async () => {
              lookup.dispose?.()
              await store.close()
              await backend.cleanup()
            },
          }
        }),
    })),
  )
}

// ---- Redis-backed caches -------------------------------------------------------------------

/** A Redis client ready for use, and the key prefix (random per setup) it must write under. */
async function redisUnderPrefix(url: string, label: string): Promise<{ client: RedisClient; prefix: string; cleanup: () => Promise<void> }> {
  const prefix = `kigo:test:${randomBytes(6).toString('hex')}:${label}:`
  const client = createRedis(url)
  if (!(await redisReady(client))) {
    client.disconnect()
    throw new Error(`Redis at ${url} is not ready`)
  }
  return {
    client,
    prefix,
    cleanup: async () => {
      const keys = await client.keysBuffer(`${prefix}*`)
      if (keys.length) await client.del(...keys)
      client.disconnect()
    },
  }
}

export interface ReplayCacheBackend extends Opened {
  cache: ReplayCache
}

/**
 * Memory, Redis, and Redis behind the resilient decorator with each fallback policy (as
 * the gateway wires it, replay/create.ts): while Redis answers, the decorator is Redis.
 * Redis' slices are 200 ms, so that a claim of one second is held at most 1.2 s, as the
 * contract's test of an expired claim needs (a minute, the default, would hold it 61 s).
 */
export async function replayCacheBackends(label: string): Promise<Array<Backend<ReplayCacheBackend>>> {
  const url = await availableRedis()
  const overRedis = (wrap: (redis: ReplayCache) => ReplayCache) =>
    url
      ? async () => {
          const redis = await redisUnderPrefix(url, label)
          const cache = wrap(new RedisReplayCache(redis.client, { prefix: redis.prefix, sliceMs: 200 }))
          return {
            cache,
            cleanup: async () => {
              await cache.close()
              await redis.cleanup()
            },
          }
        }
      : null
  return [
    {
      name: 'memory',
      setup: async () => {
        const cache = new MemoryReplayCache()
        return { cache, cleanup: () => cache.close() }
      },
    },
    { name: 'redis', setup: overRedis((redis) => redis) },
    { name: 'resilient fail-closed over redis', setup: overRedis((redis) => new ResilientReplayCache(redis, { policy: 'fail-closed' })) },
    { name: 'resilient memory-fallback over redis', setup: overRedis((redis) => new ResilientReplayCache(redis, { policy: 'memory' })) },
  ]
}

export interface FailureThrottleBackend extends Opened {
  /** A throttle with these settings (many per suite, all cleaned up with it). */
  make: (settings: ThrottleSettings) => FailureThrottle
}

/**
 * Memory, Redis, and the decorators over Redis (throttle/create.ts): resilient alone, the
 * local view alone, and both as the gateway stacks them.
 */
export async function failureThrottleBackends(label: string): Promise<Array<Backend<FailureThrottleBackend>>> {
  const url = await availableRedis()
  const made = (make: (settings: ThrottleSettings, redis?: { client: RedisClient; prefix: string }) => FailureThrottle, needsRedis: boolean) => {
    if (needsRedis && !url) return null
    return async () => {
      const redis = needsRedis ? await redisUnderPrefix(url!, label) : undefined
      const throttles: FailureThrottle[] = []
      return {
        make: (settings: ThrottleSettings) => {
          const t = make(settings, redis)
          throttles.push(t)
          return t
        },
        cleanup: async () => {
          for (const t of throttles) await t.close()
          await redis?.cleanup()
        },
      }
    }
  }
  const redisThrottle = (s: ThrottleSettings, redis?: { client: RedisClient; prefix: string }) => new RedisFailureThrottle(redis!.client, { ...s, prefix: redis!.prefix })
  return [
    { name: 'memory', setup: made((s) => new MemoryFailureThrottle(s), false) },
    { name: 'redis', setup: made(redisThrottle, true) },
    { name: 'resilient over redis', setup: made((s, r) => new ResilientFailureThrottle(redisThrottle(s, r), s), true) },
    { name: 'cached over redis', setup: made((s, r) => new CachedFailureThrottle(redisThrottle(s, r)), true) },
    { name: 'cached, resilient, over redis', setup: made((s, r) => new CachedFailureThrottle(new ResilientFailureThrottle(redisThrottle(s, r), s)), true) },
  ]
}
