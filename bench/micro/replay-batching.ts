// Benchmark: how the Redis replay cache sends the claims of one event-loop turn, in CPU per
// claim, both of this process (the gateway's side) and of Redis (`INFO cpu`), since both
// share the machine: as one script (RedisReplayCache), as one script wrapped in a
// pipeline of its own by ioredis' auto-pipelining (the way before the script was kept out
// of it), as a pipeline of one `SET NX EX` per claim (the way before the script), and as
// one `SET NX EX` per claim left to ioredis' enableAutoPipelining (which the client of src/common/redis.ts turns on; the
// required-work proxy of the benchmark claims this way). CALLERS concurrent callers
// (default 4,12,32: under the gateway-alone OAuth load the claims of a turn numbered 11 on
// average) claim 40,000 fresh nonces against REDIS_URL (default redis://127.0.0.1:6379).
// `node dist/bench/micro/replay-batching.js [rounds]` (default 7) prints each way's
// medians over the rounds, the ways taken in turn, the order turned each round.
import { randomBytes } from 'node:crypto'
import { createRedis, redisReady, type RedisClient } from '../../src/common/redis.js'
import { hashKey, wholeSeconds } from '../../src/gateway/replay/key.js'
import { RedisReplayCache } from '../../src/gateway/replay/redis.js'
import type { ReplayCache } from '../../src/gateway/replay/types.js'
import { median } from '../report.js'

/** The way before the script: the claims of a turn as one pipeline of SETs. */
class PipelinedReplayCache implements ReplayCache {
  #pending: Array<{ key: string; ttl: number; resolve: (claimed: boolean) => void; reject: (err: Error) => void }> = []
  constructor(
    readonly client: RedisClient,
    readonly prefix: string,
  ) {}
  claim(key: string, ttlSeconds: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.#pending.push({ key: this.prefix + hashKey(key), ttl: wholeSeconds(ttlSeconds), resolve, reject }) === 1) setImmediate(() => this.#flush())
    })
  }
  #flush(): void {
    const batch = this.#pending
    this.#pending = []
    const pipeline = this.client.pipeline()
    for (const c of batch) pipeline.set(c.key, '1', 'EX', c.ttl, 'NX')
    pipeline.exec().then(
      (results) => batch.forEach((c, i) => (results?.[i]?.[0] ? c.reject(results[i][0]) : c.resolve(results?.[i]?.[1] === 'OK'))),
      (err: Error) => batch.forEach((c) => c.reject(err)),
    )
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

/** The other alternative: one SET per claim, batching left to the client's auto-pipelining. */
class AutoPipelinedReplayCache implements ReplayCache {
  constructor(
    readonly client: RedisClient,
    readonly prefix: string,
  ) {}
  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    return (await this.client.set(this.prefix + hashKey(key), '1', 'EX', wholeSeconds(ttlSeconds), 'NX')) === 'OK'
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

const total = 40_000
const rounds = Number(process.argv[2] ?? 7)
const callerCounts = (process.env.CALLERS ?? '4,12,32').split(',').map(Number)
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const client = createRedis(url, { commandTimeoutMs: 5000 })
const stats = createRedis(url, { commandTimeoutMs: 5000 })
// The script as it was sent before it was kept out of auto-pipelining: each script wrapped
// in a pipeline of its own by the client.
const wrapping = createRedis(url, { commandTimeoutMs: 5000 })
if (!(await redisReady(client)) || !(await redisReady(stats)) || !(await redisReady(wrapping))) throw new Error('Redis is not answering')

/** CPU time Redis has used, µs (user and system). */
async function redisCpuUs(): Promise<number> {
  const info = await stats.info('cpu')
  const seconds = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN)
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6
}

/** This process's and Redis's CPU µs per claim, and the wall µs per claim. */
async function run(cache: ReplayCache, callers: number): Promise<[number, number, number]> {
  const tag = randomBytes(6).toString('hex')
  let next = 0
  let claimed = 0
  const redisBefore = await redisCpuUs()
  const cpuBefore = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < total) {
        const i = next++
        if (await cache.claim(`oauth:consumer:token:${tag}:${i}`, 601)) claimed++
      }
    }),
  )
  const wall = Number(process.hrtime.bigint() - t0) / 1e3
  const cpu = process.cpuUsage(cpuBefore)
  const redis = (await redisCpuUs()) - redisBefore
  if (claimed !== total) throw new Error(`claimed ${claimed} of ${total}`)
  return [(cpu.user + cpu.system) / total, redis / total, wall / total]
}

/** `cache` with its script left to the client's auto-pipelining, as before. */
function autoPipelinedScripts(cache: RedisReplayCache): RedisReplayCache {
  cache.client.options.autoPipeliningIgnoredCommands = []
  return cache
}

const prefix = `kigo:bench:${randomBytes(4).toString('hex')}:`
const ways: Array<[string, ReplayCache]> = [
  ['one script per turn (RedisReplayCache)', new RedisReplayCache(client, { prefix })],
  ['one script per turn, auto-pipelined', autoPipelinedScripts(new RedisReplayCache(wrapping, { prefix }))],
  ['one pipeline of SETs per turn', new PipelinedReplayCache(client, prefix)],
  ['auto-pipelining only', new AutoPipelinedReplayCache(client, prefix)],
]
try {
  for (const callers of callerCounts) {
    const measured = new Map<string, Array<[number, number, number]>>(ways.map(([name]) => [name, []]))
    for (const [, cache] of ways) await run(cache, callers) // warm-up
    for (let r = 0; r < rounds; r++) {
      for (const [name, cache] of r % 2 === 0 ? ways : [...ways].reverse()) measured.get(name)!.push(await run(cache, callers))
    }
    console.log(`${callers} callers, µs per claim (median of ${rounds} rounds):`)
    for (const [name, xs] of measured) {
      const [own, redis, wall] = [0, 1, 2].map((k) => median(xs.map((x) => x[k]!)))
      console.log(`  ${name.padEnd(40)} this process ${own!.toFixed(2)}  Redis ${redis!.toFixed(2)}  both ${(own! + redis!).toFixed(2)}  wall ${wall!.toFixed(2)}`)
    }
  }
} finally {
  let cursor = '0'
  do {
    const [c, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = c
    if (found.length > 0) await client.del(...found)
  } while (cursor !== '0')
  client.disconnect()
  stats.disconnect()
  wrapping.disconnect()
}
