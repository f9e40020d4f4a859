// A private redis-server child process, so a test can take Redis away and bring it back
// on the same port without disturbing the shared one.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { expect } from 'vitest'
import { createRedis, redisReady, type RedisClient } from '../../src/common/redis.js'
import { freePort } from './ports.js'

export class PrivateRedis {
  #child: ChildProcess | undefined

  private constructor(
    readonly port: number,
    readonly extraArgs: string[] = [],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort())
    await r.start()
    return r
  }

  /** A one-node Redis Cluster holding every slot (enough to exercise the Cluster client). */
  static async startCluster(): Promise<PrivateRedis> {
    const port = await freePort()
    const dir = mkdtempSync(join(tmpdir(), 'kigo-cluster-'))
    const r = new PrivateRedis(port, ['--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1', '--cluster-config-file', join(dir, 'nodes.conf'), '--dir', dir])
    await r.start()
    const admin = new Redis({ port, host: '127.0.0.1' })
    try {
      await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
      for (let i = 0; i < 100; i++) {
        const info = String(await admin.call('CLUSTER', 'INFO'))
        if (info.includes('cluster_state:ok')) return r
        await sleep(50)
      }
      throw new Error('cluster did not become ready')
    } finally {
      admin.disconnect()
    }
  }

  /** Starts (or restarts) redis-server on this port and waits until it answers. */
  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.extraArgs], {
      stdio: 'ignore',
    })
    this.#child = child
    const probe = new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
    probe.on('error', () => {})
    try {
      for (let i = 0; i < 100; i++) {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`)
        try {
          await probe.connect()
          await probe.ping()
          return
        } catch {
          probe.disconnect()
          await sleep(50)
        }
      }
      throw new Error('redis-server did not start')
    } finally {
      probe.disconnect()
    }
  }

  /** Kills the server at once (no clean shutdown) and waits for it to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill(signal)
    await exited
  }

  /** Freezes or resumes the server: connections stay open but nothing answers. */
  pause(): void {
    this.#child?.kill('SIGSTOP')
  }

  resume(): void {
    this.#child?.kill('SIGCONT')
  }
}

/** Polls `attempt` until it resolves truthy; returns the milliseconds it took. */
export async function eventually(attempt: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = Date.now()
  for (;;) {
    try {
      if (await attempt()) return Date.now() - started
    } catch {
      // not yet
    }
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`)
    await sleep(100)
  }
}

export interface WitnessedRedis {
  redis: PrivateRedis
  /** The client under test. */
  client: RedisClient
  /** Another gateway's client on the same Redis: proves what really reached Redis. */
  witness: RedisClient
  /** Disconnects both clients and kills the server. */
  close(): Promise<void>
}

/** A private Redis and two ready clients of the kigo kind, for outage tests. */
export async function startWitnessedRedis(): Promise<WitnessedRedis> {
  const redis = await PrivateRedis.start()
  const client = createRedis(redis.url)
  const witness = createRedis(redis.url)
  expect(await redisReady(client)).toBe(true)
  expect(await redisReady(witness)).toBe(true)
  return {
    redis,
    client,
    witness,
    async close() {
      client.disconnect()
      witness.disconnect()
      await redis.kill()
    },
  }
}
