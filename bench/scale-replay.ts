// The replay cache at scale (docs/performance.md#the-replay-cache-in-redis): what one live
// nonce costs Redis, and how many round trips to Redis an authenticated request makes.
//
// - Memory: millions of distinct OAuth nonces claimed through claimNonce, the function
//   every WSSE and OAuth request goes through, on the gateway's RedisReplayCache with its
//   prefix and TTL, into a Redis of its own (nothing else in it); `used_memory` of INFO
//   memory before and after, divided by the nonces. Measured twice: in the steady shape
//   (the slice sets), and in the first half hour after a gateway starts, when the earlier
//   shape (a key per claim) is claimed too.
// - Round trips: a production topology on that Redis, N signed WSSE and N OAuth requests
//   one after the other through the gateway, every command Redis receives seen by MONITOR
//   (commands run inside a script are listed apart and not counted as round trips);
//   the commands of an idle period as long are taken away.
//
//   node dist/bench/scale-replay.js [--nonces N] [--requests N]
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { request } from 'undici'
import type { RedisClient } from '../src/common/redis.js'
import { oauthNonceKey, type CheckedOAuthRequest } from '../src/gateway/auth/oauth/verify.js'
import { claimNonce } from '../src/gateway/domain/auth-results.js'
import { replayEarlierKeyPrefix, replaySetPrefix } from '../src/gateway/replay/create.js'
import { RedisReplayCache } from '../src/gateway/replay/redis.js'
import { freePort, stopAll } from './processes.js'
import { requestSource } from './scenarios.js'
import { seed } from './seed.js'
import { createBenchDatabase, defaultDatabaseUrl, startTopology } from './topology.js'

export interface ScaleReplay {
  nonces: number
  /** used_memory growth per claimed nonce, steady key shape. */
  bytes_per_nonce: number
  /** The same in a gateway's first half hour, when the earlier key shape is claimed as well. */
  bytes_per_nonce_upgrade: number | null
  /** Client commands Redis received per request (round trips), and what they were. */
  round_trips: Record<'wsse' | 'oauth', { per_request: number; commands: Record<string, number> }> | null
}

const log = (line: string) => process.stderr.write(`${line}\n`)

/** The gateway's claim window at the default 300 s: 2 × window + 1. */
const ttlSeconds = 601

/** A redis-server of our own, daemonized in a directory of its own; stop() shuts it down. */
export async function privateRedis(): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'kigo-bench-redis-'))
  const started = spawnSync('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--dir', dir, '--pidfile', join(dir, 'redis.pid'), '--logfile', join(dir, 'redis.log')])
  if (started.status !== 0) throw new Error(`redis-server did not start: ${started.stderr.toString()}`)
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
  probe.on('error', () => {})
  let ready = false
  for (let i = 0; i < 100 && !ready; i++) {
    try {
      await probe.connect()
      ready = (await probe.ping()) === 'PONG'
    } catch {
      probe.disconnect()
      await sleep(50)
    }
  }
  if (!ready) throw new Error(`redis-server on port ${port} did not answer`)
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await probe.call('SHUTDOWN', 'NOSAVE').catch(() => undefined)
      probe.disconnect()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function usedMemory(client: RedisClient): Promise<number> {
  const m = /^used_memory:(\d+)/m.exec(await client.info('memory'))
  if (!m) throw new Error('INFO memory has no used_memory')
  return Number(m[1])
}

/** Claims `nonces` distinct nonces as verified OAuth requests do, `together` per turn; bytes of used_memory per nonce. */
async function bytesPerNonce(client: RedisClient, nonces: number, legacy: boolean, together = 2000): Promise<number> {
  await client.flushall()
  const prefix = replaySetPrefix('oauth')
  const cache = new RedisReplayCache(client, { prefix, ...(legacy ? { legacyPrefix: replayEarlierKeyPrefix('oauth'), legacyUntil: Date.now() + 3_600_000 } : {}) })
  const before = await usedMemory(client)
  const timestamp = Math.floor(Date.now() / 1000)
  const refused = () => {
    throw new Error('a fresh nonce was refused')
  }
  for (let start = 0; start < nonces; start += together) {
    const claims: Array<Promise<unknown>> = []
    for (let i = start; i < Math.min(nonces, start + together); i++) {
      const key = oauthNonceKey({ consumerKey: 'bench-consumer', token: `bench-token-${i % 100}`, timestamp, nonce: `nonce-${i}` } as CheckedOAuthRequest)
      claims.push(claimNonce(cache, key, ttlSeconds, 'oauth', 5, refused, `token-${i % 100}`).then((failed) => failed && refused()))
    }
    await Promise.all(claims)
  }
  const after = await usedMemory(client)
  // Every nonce a member of one slice set (one set, two when the run crossed a slice's end), and a key of the earlier shape each while it is claimed.
  const slices = await client.keys(`${prefix}*`)
  let members = 0
  for (const slice of slices) members += await client.scard(slice)
  if (members !== nonces) throw new Error(`expected ${nonces} members in the slice sets, they hold ${members}`)
  if ((await client.dbsize()) !== slices.length + (legacy ? nonces : 0)) throw new Error(`expected ${slices.length} slice sets${legacy ? ` and ${nonces} keys of the earlier shape` : ''}, Redis holds ${await client.dbsize()} keys`)
  log(`  ${slices.length} slice set(s): ${slices.join(', ')}`)
  await client.flushall()
  return Number(((after - before) / nonces).toFixed(1))
}

/** MONITOR on `port`: client commands by name, and those run from scripts apart. */
function monitor(port: number): { counts(): { client: Record<string, number>; scripted: number }; stop(): void } {
  // redis-cli rather than a client library: MONITOR's lines say which commands came from a script ("[0 lua]").
  const child = spawn('redis-cli', ['-p', String(port), 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] })
  const client: Record<string, number> = {}
  let scripted = 0
  let rest = ''
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('latin1')).split('\n')
    rest = lines.pop()!
    for (const line of lines) {
      const m = /^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line)
      if (!m) continue
      if (m[1] === 'lua') scripted++
      else client[m[2]!.toLowerCase()] = (client[m[2]!.toLowerCase()] ?? 0) + 1
    }
  })
  return { counts: () => ({ client: { ...client }, scripted }), stop: () => child.kill() }
}

const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0)
const minus = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(a)) if (v - (b[k] ?? 0) !== 0) out[k] = v - (b[k] ?? 0)
  return out
}

async function roundTrips(redis: { url: string; port: number }, requests: number): Promise<NonNullable<ScaleReplay['round_trips']>> {
  const database = await createBenchDatabase(process.env.DATABASE_URL ?? defaultDatabaseUrl)
  try {
    const topology = await startTopology({ databaseUrl: database.url, redisUrl: redis.url })
    try {
      const base = (port: number) => `http://127.0.0.1:${port}`
      const fixture = await seed({ adminUrl: base(topology.ports.admin), adminToken: topology.adminToken, gatewayUrl: base(topology.ports.gateway), host: topology.host, entries: 20, tokens: 2 })
      const result = {} as NonNullable<ScaleReplay['round_trips']>
      for (const kind of ['wsse', 'oauth'] as const) {
        const source = requestSource(kind, fixture)
        const send = async () => {
          const { path, headers } = source()
          const res = await request(`${base(topology.ports.gateway)}${path}`, { headers })
          await res.body.text()
          if (res.statusCode !== 200) throw new Error(`${kind} request answered ${res.statusCode}`)
        }
        for (let i = 0; i < 20; i++) await send()
        // Idle first, as long as the requests take, for whatever the processes send by themselves.
        const started = Date.now()
        const busy = monitor(redis.port)
        await sleep(300)
        const atStart = busy.counts().client
        for (let i = 0; i < requests; i++) await send()
        await sleep(300)
        const busyMs = Date.now() - started
        const during = minus(busy.counts().client, atStart)
        busy.stop()
        const idle = monitor(redis.port)
        await sleep(busyMs)
        const quiet = idle.counts().client
        idle.stop()
        const commands = minus(during, quiet)
        result[kind] = { per_request: Number((total(commands) / requests).toFixed(3)), commands }
        log(`  ${kind}: ${result[kind].per_request} round trips per request (${JSON.stringify(commands)} over ${requests} requests; idle ${JSON.stringify(quiet)})`)
      }
      return result
    } finally {
      await topology.stop()
    }
  } finally {
    await database.drop()
  }
}

/** Runs both measurements on a Redis of their own; `scale.replay` of the results. */
export async function scaleReplay(opts: { nonces?: number; requests?: number; upgrade?: boolean; roundTrips?: boolean } = {}): Promise<ScaleReplay> {
  const nonces = opts.nonces ?? 3_000_000
  const redis = await privateRedis()
  // Without the gateway's command deadline: FLUSHALL of millions of keys takes seconds.
  const client = new Redis({ port: redis.port, host: '127.0.0.1' })
  try {
    log(`replay cache: ${nonces} nonces claimed through claimNonce into a Redis of its own (port ${redis.port})`)
    const steady = await bytesPerNonce(client, nonces, false)
    log(`  ${steady} bytes of used_memory per nonce`)
    const upgrade = opts.upgrade === false ? null : await bytesPerNonce(client, nonces, true)
    if (upgrade !== null) log(`  ${upgrade} bytes per nonce while the earlier key shape is claimed too`)
    const trips = opts.roundTrips === false ? null : await roundTrips(redis, opts.requests ?? 200)
    return { nonces, bytes_per_nonce: steady, bytes_per_nonce_upgrade: upgrade, round_trips: trips }
  } finally {
    client.disconnect()
    await redis.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`)
    return i > 0 ? Number(process.argv[i + 1]) : undefined
  }
  const nonces = arg('nonces')
  const requests = arg('requests')
  try {
    console.log(JSON.stringify({ scale: { replay: await scaleReplay({ ...(nonces ? { nonces } : {}), ...(requests ? { requests } : {}) }) } }, null, 2))
  } finally {
    await stopAll()
  }
}
