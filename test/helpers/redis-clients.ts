// Redis clients for one test file, under a random key prefix: each client is ready when
// returned, and afterAll deletes the file's keys and disconnects every client.
import { randomBytes } from 'node:crypto'
import { afterAll, expect } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../src/common/redis.js'

export function redisClients(url: string | null, label: string): { prefix: string; client(): Promise<RedisClient> } {
  const prefix = `kigo:test:${randomBytes(6).toString('hex')}:${label}:`
  const clients: RedisClient[] = []
  afterAll(async () => {
    for (const c of clients) {
      const keys = await c.keysBuffer(`${prefix}*`)
      if (keys.length) await c.del(...keys)
      c.disconnect()
    }
  })
  return {
    prefix,
    async client() {
      const client = createRedis(url!)
      clients.push(client)
      expect(await redisReady(client)).toBe(true)
      return client
    },
  }
}
