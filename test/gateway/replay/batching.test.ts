// Claims made in one turn of the event loop leave Redis-bound as one script, each still
// checked and added on its own with its own TTL: the answers are exactly those of separate
// commands. A Redis that has lost the script gets it again.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it, vi } from 'vitest'
import type { RedisClient } from '../../../src/common/redis.js'
import { RedisReplayCache, storedMember } from '../../../src/gateway/replay/redis.js'
import { redisClients } from '../../helpers/redis-clients.js'
import { availableRedis } from '../../helpers/services.js'

const url = await availableRedis()
const redis = redisClients(url, 'batching')

/** The name under which RedisReplayCache gives the client its script. */
const claimCommand = 'kigoClaimNonces'

/**
 * Calls of the client's script command made on the client itself (were the script left to
 * ioredis' auto-pipelining, the command copied onto each pipeline would be called there too).
 */
function scriptCalls(client: RedisClient): () => number {
  const spy = vi.spyOn(client as unknown as Record<string, (...args: unknown[]) => unknown>, claimCommand)
  return () => spy.mock.contexts.filter((context) => context === client).length
}

/** 30 claims in one turn over 20 distinct keys: the first claim of each wins, the 10 repeats lose. */
async function claimThirty(cache: RedisReplayCache, tag: string): Promise<void> {
  const keys = Array.from({ length: 30 }, (_, i) => `${tag}:k${i % 20}`)
  const answers = await Promise.all(keys.map((k) => cache.claim(k, 60)))
  expect(answers.slice(0, 20)).toEqual(Array(20).fill(true))
  expect(answers.slice(20)).toEqual(Array(10).fill(false))
  // Claims in a later turn see the earlier ones.
  expect(await cache.claim(`${tag}:k0`, 60)).toBe(false)
  expect(await cache.claim(`${tag}:fresh`, 60)).toBe(true)
}

describe.skipIf(!url)('RedisReplayCache batching', () => {
  it('sends the claims of one turn as one script, with per-claim answers', async () => {
    const client = await redis.client()
    const cache = new RedisReplayCache(client, { prefix: redis.prefix })
    const scripts = scriptCalls(client)
    const sets = vi.spyOn(client, 'set')
    await claimThirty(cache, 'one-script')
    // One script for the 30 claims of the first turn, one for each of the two later claims.
    expect(scripts()).toBe(3)
    expect(sets).not.toHaveBeenCalled()
  })

  it('sends the script as it is, not wrapped in a pipeline by the client\'s auto-pipelining', async () => {
    const client = await redis.client()
    const cache = new RedisReplayCache(client, { prefix: redis.prefix })
    const pipelines = vi.spyOn(client, 'pipeline')
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => cache.claim(`unwrapped:k${i}`, 60)))
    expect(answers).toEqual(Array(12).fill(true))
    expect(pipelines).not.toHaveBeenCalled()
  })

  it('sends a turn of 600 claims as three scripts, with the same per-claim answers', async () => {
    const client = await redis.client()
    const cache = new RedisReplayCache(client, { prefix: redis.prefix })
    const scripts = scriptCalls(client)
    // 500 distinct keys, then 100 of them again: the repeats lose, wherever their script split.
    const keys = Array.from({ length: 600 }, (_, i) => `many:k${i % 500}`)
    const answers = await Promise.all(keys.map((k) => cache.claim(k, 60)))
    expect(scripts()).toBe(3)
    expect(answers.slice(0, 500)).toEqual(Array(500).fill(true))
    expect(answers.slice(500)).toEqual(Array(100).fill(false))
  })

  it('gives each claim of one script its own TTL, and the slice the longest of them', async () => {
    const client = await redis.client()
    const prefix = `${redis.prefix}ttl:`
    const cache = new RedisReplayCache(client, { prefix, sliceMs: 200 })
    const claims: Array<[string, number]> = [['ttl:short', 1], ['ttl:long', 60], ['ttl:mid', 7]]
    expect(await Promise.all(claims.map(([k, ttl]) => cache.claim(k, ttl)))).toEqual([true, true, true])
    const [slice] = await client.keys(`${prefix}*`)
    expect(await client.smembersBuffer(slice!)).toHaveLength(3)
    for (const [k] of claims) expect(await client.sismember(slice!, storedMember(k))).toBe(1)
    // The slice is kept for its last possible claim of 60 s: at most 60 s and one slice from now.
    const left = await client.pttl(slice!)
    expect(left).toBeGreaterThan(59_000)
    expect(left).toBeLessThanOrEqual(60_200)
    expect(slice!.slice(0, prefix.length)).toBe(prefix)
    expect(slice!.slice(prefix.length)).toMatch(/^\d+$/)
    // The one-second claim is free again after its TTL and a slice; the others are not.
    await sleep(1500)
    expect(await Promise.all(claims.map(([k, ttl]) => cache.claim(k, ttl)))).toEqual([true, false, false])
  })

  it('sends the script again to a Redis that lost it (SCRIPT FLUSH), with the same answers', async () => {
    const client = await redis.client()
    const cache = new RedisReplayCache(client, { prefix: redis.prefix })
    await claimThirty(cache, 'flush-before')
    await client.script('FLUSH')
    await claimThirty(cache, 'flush-after')
  })
})
