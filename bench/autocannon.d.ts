// The part of autocannon 9's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
      setupRequest?: (req: Record<string, unknown>, context: Record<string, unknown>) => Record<string, unknown> | null
    }
    interface Options {
      url: string
      connections?: number
      pipelining?: number
      duration?: number
      overallRate?: number
      timeout?: number
      requests?: Request[]
    }
    interface Result {
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      statusCodeStats?: Record<string, { count: number }>
      requests: { total: number; average: number }
    }
    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void
    }
  }
  function autocannon(options: autocannon.Options): autocannon.Instance
  export default autocannon
}
