// The load generator, in its own process so that it never shares an event loop with the
// apps it measures. The parent sends one `run` message per timed window; the worker
// builds (and signs) every request first, then lets autocannon replay them, one new
// request per send, and answers with the counts and latencies it saw.
import autocannon from 'autocannon'
import { runPaced } from './paced-load.js'
import { requestSource, type Fixture, type PreparedRequest, type RequestKind } from './scenarios.js'

export interface LoadJob {
  url: string
  kind: RequestKind
  fixture: Fixture
  durationSeconds: number
  connections: number
  /** How many requests to build before the window opens. */
  prebuild: number
  /** Fixed total rate (requests per second, evenly paced: paced-load.ts) instead of saturation. */
  overallRate?: number
  /** With overallRate: seconds at that rate before the counted window, not counted (paced-load.ts). */
  warmupSeconds?: number
}

export interface LoadResult {
  rps: number
  p50Ms: number
  p99Ms: number
  responses: number
  non2xx: number
  status5xx: number
  statusCodes: Record<string, number>
  errors: number
  timeouts: number
  /** Requests built during the window because the prebuilt ones ran out. */
  builtDuringWindow: number
  buildMs: number
}

export type WorkerMessage = { type: 'started' } | { type: 'result'; result: LoadResult } | { type: 'failed'; message: string }

/** The value below which a fraction `p` of the sorted sample lies (nearest rank). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
}

function latencySummary(sorted: Float64Array): { p50Ms: number; p99Ms: number } {
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) }
}

function tally(statusCodes: Record<string, number>): { statusCodes: Record<string, number>; non2xx: number; status5xx: number } {
  let non2xx = 0
  let status5xx = 0
  for (const [code, c] of Object.entries(statusCodes)) {
    if (!code.startsWith('2')) non2xx += c
    if (code.startsWith('5')) status5xx += c
  }
  return { statusCodes, non2xx, status5xx }
}

async function run(job: LoadJob, send: (m: WorkerMessage) => void): Promise<LoadResult> {
  const next = requestSource(job.kind, job.fixture)
  const started = performance.now()
  const pool = new Array<PreparedRequest>(job.prebuild)
  for (let i = 0; i < job.prebuild; i++) pool[i] = next()
  const buildMs = performance.now() - started
  let taken = 0
  let builtDuringWindow = 0
  const take = (): PreparedRequest => {
    if (taken < pool.length) {
      const r = pool[taken]!
      pool[taken++] = undefined as unknown as PreparedRequest
      return r
    }
    builtDuringWindow++
    return next()
  }

  if (job.overallRate) {
    const paced = await runPaced({
      url: job.url,
      rate: job.overallRate,
      durationSeconds: job.durationSeconds,
      ...(job.warmupSeconds ? { warmupSeconds: job.warmupSeconds } : {}),
      connections: job.connections,
      take,
      onStarted: () => send({ type: 'started' }),
    })
    const codes = tally(paced.statusCodes)
    return {
      rps: paced.latencies.length / job.durationSeconds,
      ...latencySummary(paced.latencies.sort()),
      responses: paced.latencies.length,
      ...codes,
      errors: paced.errors,
      timeouts: 0,
      builtDuringWindow,
      buildMs,
    }
  }

  // Latencies from autocannon's own hrtime measurement, kept unrounded: its histogram
  // stores whole milliseconds, too coarse for a budget of 2 ms.
  let latencies = new Float64Array(Math.max(1024, job.prebuild))
  let count = 0
  const instance = autocannon({
    url: job.url,
    connections: job.connections,
    pipelining: 1,
    duration: job.durationSeconds,
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const r = take()
          return { ...req, method: r.method, path: r.path, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) }
        },
      },
    ],
  })
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    if (count === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2)
      bigger.set(latencies)
      latencies = bigger
    }
    latencies[count++] = responseTime
  })
  send({ type: 'started' })
  const result = await instance
  const statusCodes: Record<string, number> = {}
  for (const [code, { count: c }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = c
  return {
    rps: count / (result.duration || job.durationSeconds),
    ...latencySummary(latencies.subarray(0, count).sort()),
    responses: count,
    ...tally(statusCodes),
    errors: result.errors,
    timeouts: result.timeouts,
    builtDuringWindow,
    buildMs,
  }
}

if (process.send) {
  const send = (m: WorkerMessage) => process.send!(m)
  process.on('message', (job: LoadJob) => {
    run(job, send).then(
      (result) => send({ type: 'result', result }),
      (err: Error) => send({ type: 'failed', message: err.message }),
    )
  })
  // The parent going away ends the generator too (Ctrl-C, crash).
  process.on('disconnect', () => process.exit(0))
}
