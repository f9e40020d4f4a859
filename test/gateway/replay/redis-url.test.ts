// REDIS_URL convention of src/common/redis.ts: one server, TLS, or a Cluster (several
// seed hosts, or cluster=1); bad URLs get one line that never echoes the password.
import { describe, expect, it } from 'vitest'
import { parseRedisUrl } from '../../../src/common/redis.js'

describe('parseRedisUrl', () => {
  it('reads one server with credentials and a database', () => {
    expect(parseRedisUrl('redis://app:p%40ss@cache.internal:6380/2')).toEqual({
      cluster: false,
      nodes: [{ host: 'cache.internal', port: 6380 }],
      username: 'app',
      password: 'p@ss',
      db: 2,
      tls: false,
    })
  })

  it('defaults the port, reads a password-only user part and TLS', () => {
    expect(parseRedisUrl('rediss://:secret@[::1]')).toMatchObject({
      cluster: false,
      nodes: [{ host: '::1', port: 6379 }],
      password: 'secret',
      username: undefined,
      tls: true,
    })
  })

  it('asks for a Cluster with several hosts or cluster=1', () => {
    expect(parseRedisUrl('redis://a:7000,b:7001,c').nodes).toEqual([
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
      { host: 'c', port: 6379 },
    ])
    expect(parseRedisUrl('redis://a:7000,b:7001').cluster).toBe(true)
    expect(parseRedisUrl('redis://a:7000?cluster=1').cluster).toBe(true)
    expect(parseRedisUrl('redis://a:7000?cluster=true').cluster).toBe(true)
    expect(parseRedisUrl('redis://a:7000?cluster=0').cluster).toBe(false)
  })

  it.each([
    ['http://a:1', 'expected redis://'],
    ['redis://', 'expected redis://'],
    ['redis://a:99999', 'bad port'],
    ['redis://a b:1', 'bad host'],
    ['redis://a:1/x', 'bad database'],
    ['redis://a:1,b:2/3', 'only database 0'],
    ['redis://a:1?cluster=maybe', 'cluster must be'],
    ['redis://u:%zzhunter2@a:1', 'percent-encoding'],
  ])('rejects %s with one clear line', (url, why) => {
    expect(() => parseRedisUrl(url)).toThrow(why)
    try {
      parseRedisUrl(url)
    } catch (err) {
      expect((err as Error).message).toMatch(/^REDIS_URL: /)
      expect((err as Error).message).not.toContain('hunter2')
    }
  })
})
