// Idle keep-alive connections at scale (docs/performance.md#idle-connections): a production
// topology, then 10,000 connections opened to the gateway (its `gateway.http.maxConnections`
// default) and as many to the core, by this process. Each connection sends one anonymous
// statuses/show, reads its answer and stays open, idle, within the keep-alive timeout
// (one that has waited 30 s while the others were opened asks again).
// Reported: the growth of each process's RSS per 1,000 connections, and the gateway's
// sockets to the core (its undici pool) at most while the connections were opened, and once
// they are all idle.
//
//   node dist/bench/scale-connections.js [--connections N]
import { spawnSync } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { rssMiB, stopAll } from './processes.js'
import { seed } from './seed.js'
import { createBenchDatabase, defaultDatabaseUrl, defaultRedisUrl, startTopology } from './topology.js'

export interface ScaleConnections {
  connections: number
  /** RSS growth per 1,000 idle connections, MiB. */
  rss_mb_per_1k: { gateway: number; core: number }
  /** Connections still open when RSS was read (the server closed none). */
  open: { gateway: number; core: number }
  /** The gateway's sockets to the core: at most while connections were opened, and once all were idle. */
  upstream_sockets: { max: number; idle: number }
}

const log = (line: string) => process.stderr.write(`${line}\n`)

/** Established TCP connections of process `pid` to local port `port` (ss). */
function socketsTo(pid: number, port: number): number {
  const out = spawnSync('ss', ['-Htnp', 'state', 'established', 'dport', '=', `:${port}`], { encoding: 'utf8' }).stdout
  return out.split('\n').filter((line) => line.includes(`pid=${pid},`)).length
}

interface Held {
  sockets: Socket[]
  open(): number
  close(): void
}

/**
 * Opens `n` connections to `port`, `wave` at a time, each after one request answered.
 * Opening them all can take longer than the server's keep-alive timeout on a busy machine:
 * a connection idle for `refreshMs` sends another request, so that every one is still
 * open at the end.
 */
async function hold(port: number, n: number, request: (i: number) => string, wave = 1000, during?: () => void, refreshMs = 30_000): Promise<Held> {
  const sockets: Socket[] = []
  const used: number[] = []
  let open = 0
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' })
      sockets.push(socket)
      used.push(Date.now())
      socket.once('connect', () => {
        open++
        socket.write(request(i))
      })
      socket.once('data', (chunk: Buffer) => {
        if (!chunk.toString('latin1', 0, 12).startsWith('HTTP/1.1 200')) reject(new Error(`connection ${i}: ${chunk.toString('latin1', 0, 200)}`))
        else resolve()
      })
      socket.on('data', () => {})
      socket.once('close', () => open--)
      // A reset after the answer closes that connection only: it counts as not open.
      socket.on('error', reject)
    })
  const refresh = () => {
    const now = Date.now()
    for (const [i, socket] of sockets.entries()) {
      if (now - used[i]! < refreshMs || socket.destroyed) continue
      used[i] = now
      socket.write(request(i))
    }
  }
  for (let start = 0; start < n; start += wave) {
    await Promise.all(Array.from({ length: Math.min(wave, n - start) }, (_, k) => one(start + k)))
    during?.()
    refresh()
  }
  return {
    sockets,
    open: () => open,
    close: () => {
      for (const s of sockets) s.destroy()
    },
  }
}

export async function scaleConnections(opts: { connections?: number } = {}): Promise<ScaleConnections> {
  const n = opts.connections ?? 10_000
  const database = await createBenchDatabase(process.env.DATABASE_URL ?? defaultDatabaseUrl)
  try {
    const topology = await startTopology({ databaseUrl: database.url, redisUrl: process.env.REDIS_URL ?? defaultRedisUrl })
    try {
      const base = (port: number) => `http://127.0.0.1:${port}`
      const fixture = await seed({ adminUrl: base(topology.ports.admin), adminToken: topology.adminToken, gatewayUrl: base(topology.ports.gateway), host: topology.host, entries: 50, tokens: 1 })
      const show = (i: number) => `GET /api/statuses/show/${fixture.entryIds[i % fixture.entryIds.length]}.json HTTP/1.1\r\nHost: ${fixture.host}\r\nConnection: keep-alive\r\n\r\n`
      const measure = async (name: 'gateway' | 'core', pid: number, port: number) => {
        await sleep(2000)
        const before = rssMiB(pid)!
        let maxUpstream = 0
        const upstream = () => (maxUpstream = Math.max(maxUpstream, socketsTo(topology.gateway.pid, topology.ports.core)))
        const held = await hold(port, n, show, 1000, name === 'gateway' ? upstream : undefined)
        await sleep(2000)
        const after = rssMiB(pid)!
        const open = held.open()
        const idleUpstream = socketsTo(topology.gateway.pid, topology.ports.core)
        held.close()
        if (open < n) throw new Error(`${name} closed ${n - open} of the ${n} connections before they were measured`)
        const perK = Number((((after - before) * 1000) / n).toFixed(2))
        log(`  ${name}: RSS ${before.toFixed(1)} MiB, ${after.toFixed(1)} MiB with ${open} of ${n} connections open: ${perK} MiB per 1,000${name === 'gateway' ? `; sockets to the core at most ${maxUpstream}, ${idleUpstream} once idle` : ''}`)
        await sleep(1000)
        return { perK, open, maxUpstream, idleUpstream }
      }
      log(`idle connections: ${n} to the gateway, then ${n} to the core`)
      const gateway = await measure('gateway', topology.gateway.pid, topology.ports.gateway)
      const core = await measure('core', topology.core.pid, topology.ports.core)
      return {
        connections: n,
        rss_mb_per_1k: { gateway: gateway.perK, core: core.perK },
        open: { gateway: gateway.open, core: core.open },
        upstream_sockets: { max: gateway.maxUpstream, idle: gateway.idleUpstream },
      }
    } finally {
      await topology.stop()
    }
  } finally {
    await database.drop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--connections')
  try {
    console.log(JSON.stringify({ scale: { connections: await scaleConnections(i > 0 ? { connections: Number(process.argv[i + 1]) } : {}) } }, null, 2))
  } finally {
    await stopAll()
  }
}
