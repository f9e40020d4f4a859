// Fixed-rate load for the latency budget (docs/performance.md#how-it-measures: the p99 the gateway adds at half of
// the bare proxy's saturation throughput). autocannon's rate limit (overallRate) lets
// every connection send its whole per-second quota back to back at the start of each
// second and then idle, so "half the saturation rate" is really saturation for half of
// every second, and its p99 measures queueing. This sends the requests evenly spaced
// instead (open loop: a slow answer does not delay the next send), and measures each
// from the moment it was handed to the connection pool, so time spent waiting for a
// free connection counts too.
//
// Each window begins with a warm-up at the same rate on the same connections, not counted:
// a front that sat idle while the other scenarios ran, reached through fresh connections,
// answers its first few hundred milliseconds late (measured: the bare proxy's p99 over a
// 5 s window at 2,800 requests a second was 7–14 ms after a 3 s pause and 21–75 ms after a
// 25 s one, all of it from the window's first 0.1–0.5 s), and a p99 over a few seconds is
// set by such a start alone. The figure is the steady state's, as wrk2's calibration
// period makes it; the load, the connections and the rate do not change at its end.
import { Pool } from 'undici'
import type { PreparedRequest } from './scenarios.js'

export interface PacedResult {
  /** The counted window's latencies, in the order the answers came. */
  latencies: Float64Array
  /** Every answer's status, the warm-up's included: a failed request fails the run wherever it falls. */
  statusCodes: Record<string, number>
  errors: number
}

export async function runPaced(opts: {
  url: string
  rate: number
  durationSeconds: number
  /** Sent at the same rate before the counted window, and not counted. */
  warmupSeconds?: number
  connections: number
  /**
   * The connections to send on, kept open after the window (the caller closes them): a
   * window cut into slices goes on on the slices' warm connections. A pool of its own,
   * closed at the end, when not given.
   */
  pool?: Pool
  take: () => PreparedRequest
  /** When the counted window opens (after the warm-up). */
  onStarted?: () => void
}): Promise<PacedResult> {
  const pool = opts.pool ?? new Pool(opts.url, { connections: opts.connections, pipelining: 1, keepAliveTimeout: 60_000 })
  const warm = Math.round(opts.rate * (opts.warmupSeconds ?? 0))
  const total = warm + Math.max(1, Math.round(opts.rate * opts.durationSeconds))
  const latencies = new Float64Array(total - warm)
  const statusCodes: Record<string, number> = {}
  let errors = 0
  let sent = 0
  let settled = 0
  let answered = 0
  const start = performance.now()
  await new Promise<void>((resolve) => {
    const fire = (counts: boolean) => {
      const r = opts.take()
      const t0 = performance.now()
      pool
        .request({ method: r.method, path: r.path, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) })
        .then(async (res) => {
          await res.body.dump()
          statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1
          if (counts) latencies[answered++] = performance.now() - t0
        })
        .catch(() => errors++)
        .finally(() => {
          if (++settled === total) resolve()
        })
    }
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * opts.rate) + 1)
      while (sent < due) {
        if (sent === warm) opts.onStarted?.()
        fire(sent++ >= warm)
      }
      if (sent < total) setTimeout(tick, 1)
    }
    tick()
  })
  if (opts.pool === undefined) await pool.close()
  return { latencies: latencies.subarray(0, answered), statusCodes, errors }
}
