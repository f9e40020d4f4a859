// Idle keep-alive connections at scale (docs/performance.md#idle-connections): a production
// topology, then 10,000 connections opened to the gateway (its `gateway.http.maxConnections`
// default) and as many to the core, by this process. Each connection sends one anonymous
// statuses/show, reads its answer and stays open, idle, within the keep-alive timeout
// (one that has waited 30 s while the others were opened asks again).
//
// What is measured is what each idle connection holds (its socket, HTTP parser, the
// server's per-connection state), not what the requests that opened them leave behind.
// Those requests arrive 1,000 at once, and a burst like that grows a process by itself,
// about 35 MiB in the gateway, nearly as much as its 10,000 idle connections: the old
// generation and the heap limit grow to hold 1,000 requests in flight, the allocator
// keeps what their buffers and sockets used, and neither is given back at once. (Not the
// young generation: --trace-gc-verbose shows it at its full 2 x 16 MiB before the first
// request.) Read before any request but the seeding, RSS counted both as per-connection
// memory (11 MiB per 1,000 in the gateway); after a warm-up on 50 connections, which grows
// the JIT's code and the caches but not that, 7.8. So each process is first warmed up with
// the same requests in the same shape, twice: waves of 1,000 connections that each send
// one request and are closed after the wave. The second warm-up's growth is reported (near
// 0: what the requests alone still add). RSS is read after each warm-up, half-way through
// opening the held connections and when all are open, each time after the process was
// left alone for 3 s.
// Reported: the growth of each process's RSS per 1,000 connections, over all of them and
// over the second half only (no memory freed by the warm-up's connections left to reuse
// there), how many were open when RSS was read (established, as the kernel sees them
// from this end: the bench fails if any was closed), and the gateway's sockets to the
// core (its undici pool) at most while the connections were opened, and once all are idle.
// The gateway takes exactly its maxConnections here: the seeding's connections are closed
// first and the readiness probes leave none open, or the last of the 10,000 is refused.
// The core keeps an idle connection 72 s (Fastify's default keepAliveTimeout; kigo sets
// none for the core): opening all takes far less, and the 30 s refresh covers a slow machine.
//
//   node dist/bench/scale-connections.js [--connections N]
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent as UndiciAgent } from 'undici'
import { stopAll } from './processes.js'
import { seed } from './seed.js'
import { createBenchDatabase, defaultDatabaseUrl, defaultRedisUrl, startTopology } from './topology.js'

export interface ScaleConnections {
  connections: number
  /** RSS growth per 1,000 idle connections, MiB. */
  rss_mb_per_1k: { gateway: number; core: number }
  /** The same over the second half of the connections only (null when they were opened in one wave). */
  rss_mb_per_1k_second_half: { gateway: number | null; core: number | null }
  /** Connections still open when RSS was read (the server closed none). */
  open: { gateway: number; core: number }
  /** RSS growth per 1,000 requests of the second warm-up (no connection held): the requests' own share, near 0 when warm. */
  requests_rss_mb_per_1k: { gateway: number; core: number }
  /** The gateway's sockets to the core: at most while connections were opened, and once all were idle. */
  upstream_sockets: { max: number; idle: number }
}

const log = (line: string) => process.stderr.write(`${line}\n`)

/** How long a process is left alone before its RSS is read. */
const settleMs = 3000

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
async function hold(port: number, n: number, request: (i: number) => string, wave = 1000, during?: (opened: number) => void | Promise<void>, refreshMs = 30_000): Promise<Held> {
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
    await during?.(Math.min(start + wave, n))
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

/** RSS and its anonymous part (heaps, buffers: what connections add) of `pid`, MiB, from /proc/<pid>/smaps_rollup. */
function memory(pid: number): { rss: number; anonymous: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN)
  return { rss: kB('Rss') / 1024, anonymous: kB('Anonymous') / 1024 }
}

/** The warm-up: `n` connections opened `wave` at a time as hold() opens them, each wave closed once answered. */
async function warm(port: number, n: number, request: (i: number) => string, wave = 1000): Promise<void> {
  for (let start = 0; start < n; start += wave) {
    const held = await hold(port, Math.min(wave, n - start), (i) => request(start + i), wave)
    held.close()
    await sleep(100)
  }
}

export async function scaleConnections(opts: { connections?: number } = {}): Promise<ScaleConnections> {
  const n = opts.connections ?? 10_000
  const database = await createBenchDatabase(process.env.DATABASE_URL ?? defaultDatabaseUrl)
  try {
    const topology = await startTopology({ databaseUrl: database.url, redisUrl: process.env.REDIS_URL ?? defaultRedisUrl })
    try {
      const base = (port: number) => `http://127.0.0.1:${port}`
      // Seeded on connections of its own, closed after: kept alive, they would count
      // toward the gateway's maxConnections, and the last of the 10,000 would be refused.
      const seeding = new UndiciAgent()
      const fixture = await seed({ adminUrl: base(topology.ports.admin), adminToken: topology.adminToken, gatewayUrl: base(topology.ports.gateway), host: topology.host, entries: 50, tokens: 1, dispatcher: seeding })
      await seeding.close()
      const path = (i: number) => `/api/statuses/show/${fixture.entryIds[i % fixture.entryIds.length]}.json`
      const show = (i: number) => `GET ${path(i)} HTTP/1.1\r\nHost: ${fixture.host}\r\nConnection: keep-alive\r\n\r\n`
      const measure = async (name: 'gateway' | 'core', pid: number, port: number) => {
        const warmed: number[] = []
        for (let round = 0; round < 2; round++) {
          await warm(port, n, show)
          await sleep(settleMs)
          warmed.push(memory(pid).rss)
        }
        const before = memory(pid)
        let half = { ...before, count: 0 }
        let maxUpstream = 0
        const upstream = () => (maxUpstream = Math.max(maxUpstream, socketsTo(topology.gateway.pid, topology.ports.core)))
        const during = async (opened: number) => {
          if (name === 'gateway') upstream()
          if (half.count === 0 && opened >= n / 2 && opened < n) {
            await sleep(settleMs)
            half = { ...memory(pid), count: opened }
          }
        }
        const held = await hold(port, n, show, 1000, during)
        await sleep(settleMs)
        const after = memory(pid)
        // Open as the kernel sees them from this end: one the server closed is no longer established.
        const open = Math.min(held.open(), socketsTo(process.pid, port))
        const idleUpstream = socketsTo(topology.gateway.pid, topology.ports.core)
        held.close()
        if (open < n) throw new Error(`${name} closed ${n - open} of the ${n} connections before they were measured`)
        const perK = (from: number, to: number, count: number) => Number((((to - from) * 1000) / count).toFixed(2))
        const all = perK(before.rss, after.rss, n)
        const secondHalf = half.count > 0 ? perK(half.rss, after.rss, n - half.count) : null
        const requests = perK(warmed[0]!, warmed[1]!, n)
        log(
          `  ${name}: RSS ${warmed.map((v) => v.toFixed(1)).join(' and ')} MiB after each warm-up of ${n} requests; ` +
            `${half.count > 0 ? `${half.rss.toFixed(1)} MiB with ${half.count} connections, ` : ''}${after.rss.toFixed(1)} MiB with ${open} of ${n} open: ` +
            `${all} MiB per 1,000 (anonymous memory ${perK(before.anonymous, after.anonymous, n)})${secondHalf === null ? '' : `, ${secondHalf} over the second half`}` +
            `${name === 'gateway' ? `; sockets to the core at most ${maxUpstream}, ${idleUpstream} once idle` : ''}`,
        )
        await sleep(1000)
        return { all, secondHalf, requests, open, maxUpstream, idleUpstream }
      }
      log(`idle connections: ${n} to the gateway, then ${n} to the core`)
      const gateway = await measure('gateway', topology.gateway.pid, topology.ports.gateway)
      const core = await measure('core', topology.core.pid, topology.ports.core)
      return {
        connections: n,
        rss_mb_per_1k: { gateway: gateway.all, core: core.all },
        rss_mb_per_1k_second_half: { gateway: gateway.secondHalf, core: core.secondHalf },
        requests_rss_mb_per_1k: { gateway: gateway.requests, core: core.requests },
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
