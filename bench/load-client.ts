// The parent's handle on the load-generator process (load-worker.ts).
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { LoadJob, LoadResult, WorkerMessage } from './load-worker.js'

export interface LoadGenerator {
  readonly pid: number
  /** Runs one window; `onStarted` fires when the requests are built and the load begins. */
  run(job: LoadJob, onStarted?: () => void): Promise<LoadResult>
  stop(): void
}

export function startLoadGenerator(): LoadGenerator {
  const child: ChildProcess = fork(fileURLToPath(new URL('./load-worker.js', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Room for a window's worth of prebuilt requests.
    execArgv: ['--max-old-space-size=2048'],
  })
  let exited = false
  child.once('exit', () => (exited = true))
  return {
    pid: child.pid ?? 0,
    run(job, onStarted) {
      return new Promise((resolve, reject) => {
        if (exited) return reject(new Error('the load generator has exited'))
        const onExit = (code: number | null) => finish(new Error(`the load generator exited (${code}) during a run`))
        const onMessage = (m: WorkerMessage) => {
          if (m.type === 'started') onStarted?.()
          else if (m.type === 'result') finish(undefined, m.result)
          else finish(new Error(`load generator: ${m.message}`))
        }
        const finish = (err?: Error, result?: LoadResult) => {
          child.off('message', onMessage)
          child.off('exit', onExit)
          if (err) reject(err)
          else resolve(result!)
        }
        child.on('message', onMessage)
        child.once('exit', onExit)
        child.send(job)
      })
    },
    stop() {
      if (!exited) child.kill('SIGTERM')
    },
  }
}
