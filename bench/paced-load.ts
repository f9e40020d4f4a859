// Fixed-rate load for the latency budget (SPEC §8: the p99 the gateway adds at half of
// the bare proxy's saturation throughput). autocannon's rate limit (overallRate) lets
// every connection send its whole per-second quota back to back at the start of each
// second and then idle, so "half the saturation rate" is really saturation for half of
// every second, and its p99 measures queueing. This sends the requests evenly spaced
// instead (open loop: a slow answer does not delay the next send), and measures each
// from the moment it was handed to the connection pool, so time spent waiting for a
// free connection counts too.
import { Pool } from 'undici'
import type { PreparedRequest } from './scenarios.js'

export interface PacedResult {
  durationSeconds: number
  latencies: Float64Array
  statusCodes: Record<string, number>
  errors: number
}

export async function runPaced(opts: {
  url: string
  rate: number
  durationSeconds: number
  connections: number
  take: () => PreparedRequest
  onStarted?: () => void
}): Promise<PacedResult> {
  const pool = new Pool(opts.url, { connections: opts.connections, pipelining: 1, keepAliveTimeout: 60_000 })
  const total = Math.max(1, Math.round(opts.rate * opts.durationSeconds))
  const latencies = new Float64Array(total)
  const statusCodes: Record<string, number> = {}
  let errors = 0
  let sent = 0
  let settled = 0
  let answered = 0
  const start = performance.now()
  opts.onStarted?.()
  await new Promise<void>((resolve) => {
    const fire = () => {
      const r = opts.take()
      const t0 = performance.now()
      pool
        .request({ method: r.method, path: r.path, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) })
        .then(async (res) => {
          await res.body.dump()
          latencies[answered++] = performance.now() - t0
          statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1
        })
        .catch(() => errors++)
        .finally(() => {
          if (++settled === total) resolve()
        })
    }
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * opts.rate) + 1)
      while (sent < due) {
        sent++
        fire()
      }
      if (sent < total) setTimeout(tick, 1)
    }
    tick()
  })
  const durationSeconds = (performance.now() - start) / 1000
  await pool.close()
  return { durationSeconds, latencies: latencies.subarray(0, answered), statusCodes, errors }
}
