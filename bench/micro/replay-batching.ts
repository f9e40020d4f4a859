// Benchmark: the Redis replay cache's own per-turn batching (RedisReplayCache) against a
// plain `SET NX EX` per claim left to ioredis' enableAutoPipelining (which the client of
// src/common/redis.ts turns on). 50,000 fresh nonces claimed by 100 concurrent callers
// against REDIS_URL (default redis://127.0.0.1:6379); `node dist/bench/micro/replay-batching.js [rounds]`
// prints each way's median wall time over the rounds, alternating the order.
import { randomBytes } from 'node:crypto'
import { createRedis, redisReady, type RedisClient } from '../../src/common/redis.js'
import { hashKey, wholeSeconds } from '../../src/gateway/replay/key.js'
import { RedisReplayCache } from '../../src/gateway/replay/redis.js'
import type { ReplayCache } from '../../src/gateway/replay/types.js'

/** The alternative: one SET per claim, batching left to the client's auto-pipelining. */
class AutoPipelinedReplayCache implements ReplayCache {
  constructor(readonly client: RedisClient, readonly prefix: string) {}
  async claim(key: string, ttlSeconds: number): Promise<boolean> {
    return (await this.client.set(this.prefix + hashKey(key), '1', 'EX', wholeSeconds(ttlSeconds), 'NX')) === 'OK'
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

const total = 50_000
const callers = 100

async function run(cache: ReplayCache): Promise<number> {
  const tag = randomBytes(6).toString('hex')
  let next = 0
  let claimed = 0
  const t0 = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < total) {
        const i = next++
        if (await cache.claim(`oauth:consumer:token:${tag}:${i}`, 600)) claimed++
      }
    }),
  )
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (claimed !== total) throw new Error(`claimed ${claimed} of ${total}`)
  return ms
}

const rounds = Number(process.argv[2] ?? 3)
const client = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { commandTimeoutMs: 5000 })
if (!(await redisReady(client))) throw new Error('Redis is not answering')
const prefix = `kigo:bench:${randomBytes(4).toString('hex')}:`
const ways: Array<[string, ReplayCache]> = [
  ['own batching (RedisReplayCache)', new RedisReplayCache(client, { prefix })],
  ['auto-pipelining only', new AutoPipelinedReplayCache(client, prefix)],
]
const times = new Map<string, number[]>(ways.map(([name]) => [name, []]))
for (const [, cache] of ways) await run(cache) // warm-up
for (let r = 0; r < rounds; r++) {
  for (const [name, cache] of r % 2 === 0 ? ways : [...ways].reverse()) times.get(name)!.push(await run(cache))
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const [name, xs] of times) console.log(`${name.padEnd(34)} median ${median(xs).toFixed(0)} ms  (runs: ${xs.map((x) => x.toFixed(0)).join(' ')})`)
let cursor = '0'
do {
  const [c, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
  cursor = c
  if (found.length > 0) await client.del(...found)
} while (cursor !== '0')
client.disconnect()
