// Benchmark: Redis' CPU per nonce claim in a steady window (docs/performance.md#the-replay-cache-in-redis),
// the time-sliced sets of RedisReplayCache against the key per claim they replaced. A
// private Redis first holds a full window of each: ten earlier minute slices of 300,000
// members (3 million nonces) and 3 million `kr:o:` keys. CALLERS concurrent callers
// (1 and 12) then claim 40,000 fresh nonces each way: through RedisReplayCache into the
// full slices, into empty ones (a fresh prefix, as bench/micro/replay-batching.ts
// measures), and as one pipeline of `SET NX EX` per turn among the 3 million keys.
// Redis CPU is `used_cpu_user` + `used_cpu_sys` of INFO cpu, per claim.
//
//   node dist/bench/micro/replay-slices.js [rounds]   (default 3; medians printed)
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { RedisReplayCache } from '../../src/gateway/replay/redis.js'
import type { ReplayCache } from '../../src/gateway/replay/types.js'
import { median } from '../report.js'
import { privateRedis } from '../scale-replay.js'

const rounds = Number(process.argv[2] ?? 3)
const claims = 40_000
const ttl = 601

const redis = await privateRedis()
const client = new Redis({ port: redis.port, host: '127.0.0.1' })

/** The key per claim before the slices: the claims of a turn as one pipeline of SETs. */
class KeyPerClaim implements ReplayCache {
  #pending: Array<{ key: Buffer; resolve: (claimed: boolean) => void; reject: (err: Error) => void }> = []
  claim(key: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const stored = Buffer.concat([Buffer.from('kr:o:'), Buffer.from(key, 'hex').subarray(0, 9)])
      if (this.#pending.push({ key: stored, resolve, reject }) === 1) setImmediate(() => this.#flush())
    })
  }
  #flush(): void {
    const batch = this.#pending
    this.#pending = []
    const pipeline = client.pipeline()
    for (const c of batch) pipeline.set(c.key, '1', 'EX', ttl, 'NX')
    pipeline.exec().then(
      (results) => batch.forEach((c, i) => c.resolve(results?.[i]?.[1] === 'OK')),
      (err: Error) => batch.forEach((c) => c.reject(err)),
    )
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

async function redisCpu(): Promise<number> {
  const info = await client.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)![1])
  return field('used_cpu_user') + field('used_cpu_sys')
}

/** µs of Redis CPU per claim of `claims` fresh nonces by `callers` concurrent callers. */
async function run(cache: ReplayCache, callers: number): Promise<number> {
  const before = await redisCpu()
  let next = 0
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < claims) {
        next++
        if (!(await cache.claim(randomBytes(12).toString('hex'), ttl))) throw new Error('a fresh nonce was refused')
      }
    }),
  )
  return ((await redisCpu()) - before) * 1e6 / claims
}

try {
  const [seconds] = await client.time()
  const current = Math.floor((Number(seconds) * 1000) / 60_000)
  for (let slice = current - 10; slice < current; slice++) {
    for (let b = 0; b < 300; b++) await client.sadd(`kr:{o}:${slice}`, ...Array.from({ length: 1000 }, () => randomBytes(9)))
  }
  for (let b = 0; b < 3000; b++) {
    const pipeline = client.pipeline()
    for (let i = 0; i < 1000; i++) pipeline.set(Buffer.concat([Buffer.from('kr:o:'), randomBytes(9)]), '1', 'EX', ttl, 'NX')
    await pipeline.exec()
  }
  for (const callers of [1, 12]) {
    const measured: Record<string, number[]> = { 'slices, full window': [], 'slices, empty': [], 'key per claim, full window': [] }
    for (let r = 0; r < rounds; r++) {
      measured['key per claim, full window']!.push(await run(new KeyPerClaim(), callers))
      measured['slices, full window']!.push(await run(new RedisReplayCache(client, { prefix: 'kr:{o}:' }), callers))
      measured['slices, empty']!.push(await run(new RedisReplayCache(client, { prefix: `kr:{empty-${callers}-${r}}:` }), callers))
    }
    console.log(`${callers} caller(s), µs of Redis CPU per claim (median of ${rounds} rounds):`)
    for (const [name, xs] of Object.entries(measured)) console.log(`  ${name.padEnd(28)} ${median(xs).toFixed(2)}`)
  }
} finally {
  client.disconnect()
  await redis.stop()
}
