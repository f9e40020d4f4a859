// The fixed-rate load (bench/paced-load.ts) against a real server on port 0: requests
// evenly spaced at the rate asked, and a warm-up that is sent but not counted.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPaced } from '../../bench/paced-load.js'
import type { PreparedRequest } from '../../bench/scenarios.js'

describe('paced load', () => {
  let server: Server
  let url = ''
  /** Arrival times of the requests, by the path's number. */
  const arrivals = new Map<number, number>()
  /** Requests whose number is in this set are answered 250 ms late. */
  const slow = new Set<number>()
  /** Requests whose number is in this set are answered 500. */
  const failing = new Set<number>()

  beforeAll(async () => {
    server = createServer((req, res) => {
      const n = Number(req.url!.slice(1))
      arrivals.set(n, performance.now())
      if (failing.has(n)) res.statusCode = 500
      setTimeout(() => res.end('ok'), slow.has(n) ? 250 : 0)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(() => new Promise((r) => server?.close(r)))

  const numbered = () => {
    let n = 0
    return (): PreparedRequest => ({ method: 'GET', path: `/${n++}`, headers: {} })
  }

  it('on a pool it is given, the windows go on on the same connections, left open for the caller', async () => {
    const sockets = new Set<unknown>()
    const count = (socket: unknown) => sockets.add(socket)
    server.on('connection', count)
    const pool = new Pool(url, { connections: 4, pipelining: 1, keepAliveTimeout: 60_000 })
    try {
      // Every connection of the pool open first (four requests at once, answered late): a
      // window that opened one of its own would show as a fifth, however busy the machine.
      const late = [1000, 1001, 1002, 1003]
      for (const n of late) slow.add(n)
      await Promise.all(late.map(async (n) => (await pool.request({ method: 'GET', path: `/${n}` })).body.text()))
      for (const n of late) slow.delete(n)
      expect(sockets.size).toBe(4)
      const opened: number[] = []
      for (let slice = 0; slice < 3; slice++) {
        const r = await runPaced({ url, rate: 200, durationSeconds: 0.2, connections: 4, pool, take: numbered() })
        expect(r.latencies.length).toBe(40)
        opened.push(sockets.size)
      }
      // The windows opened none, and the pool still sends.
      expect(opened).toEqual([4, 4, 4])
      expect((await pool.request({ method: 'GET', path: '/0' })).statusCode).toBe(200)
    } finally {
      server.off('connection', count)
      await pool.close()
    }
    // Without one, each window opens its own.
    server.on('connection', count)
    try {
      sockets.clear()
      const opened: number[] = []
      for (let slice = 0; slice < 3; slice++) {
        await runPaced({ url, rate: 200, durationSeconds: 0.2, connections: 4, take: numbered() })
        opened.push(sockets.size)
      }
      expect(opened[1]).toBeGreaterThan(opened[0]!)
      expect(opened[2]).toBeGreaterThan(opened[1]!)
    } finally {
      server.off('connection', count)
    }
  })

  it('sends every request of the warm-up and the window, and counts only the window', async () => {
    arrivals.clear()
    slow.clear()
    // The warm-up's first requests are slow (answered long before the window opens): none
    // of them may reach the percentiles.
    for (let i = 0; i < 4; i++) slow.add(i)
    let startedAt = 0
    const result = await runPaced({ url, rate: 100, warmupSeconds: 0.5, durationSeconds: 1, connections: 16, take: numbered(), onStarted: () => (startedAt = performance.now()) })
    expect(arrivals.size).toBe(150)
    expect(result.latencies).toHaveLength(100)
    expect(result.statusCodes).toEqual({ '200': 150 })
    expect(result.errors).toBe(0)
    expect(Math.max(...result.latencies)).toBeLessThan(200)
    // The counted window opens with its first request, after the warm-up's 50.
    expect(startedAt).toBeGreaterThan(arrivals.get(49)!)
    expect(startedAt).toBeLessThanOrEqual(arrivals.get(50)!)
  })

  it('reports a failed answer of the warm-up, which the run must not pass over', async () => {
    arrivals.clear()
    slow.clear()
    failing.clear()
    failing.add(3)
    const result = await runPaced({ url, rate: 100, warmupSeconds: 0.2, durationSeconds: 0.2, connections: 4, take: numbered() })
    failing.clear()
    expect(result.latencies).toHaveLength(20)
    expect(result.statusCodes).toEqual({ '200': 39, '500': 1 })
  })

  it('counts a slow answer inside the window', async () => {
    arrivals.clear()
    slow.clear()
    slow.add(10)
    const result = await runPaced({ url, rate: 100, durationSeconds: 0.3, connections: 4, take: numbered() })
    expect(result.latencies).toHaveLength(30)
    expect(Math.max(...result.latencies)).toBeGreaterThanOrEqual(245)
  })

  it('spaces the requests evenly instead of sending each second’s quota at once', async () => {
    arrivals.clear()
    slow.clear()
    await runPaced({ url, rate: 100, durationSeconds: 1, connections: 4, take: numbered() })
    const times = [...arrivals.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => t)
    expect(times).toHaveLength(100)
    // 100 a second: the 50th request leaves about half a second after the first, not at once.
    expect(times[49]! - times[0]!).toBeGreaterThan(400)
  })
})
