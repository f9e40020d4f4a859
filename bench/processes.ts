// Child processes the benchmark starts (core, gateway, bare proxy, embedded): started
// with their output kept for the report, waited on until ready, measured through
// /proc, and always stopped at the end (SIGTERM, then SIGKILL after a grace period).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { basename, resolve } from 'node:path'

export interface AppProcess {
  readonly name: string
  readonly pid: number
  /** The last lines the process wrote, for a failure report. */
  output(): string
  exited(): boolean
  stop(): Promise<void>
}

const running = new Set<AppProcess>()

/**
 * What the build in `dir` is, as a results file may name it: the commit its checkout is at,
 * or else the folder's own name; never its path, which names one machine's folders.
 */
export function buildName(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return basename(resolve(dir))
  }
}

/** A Node app, on this process's Node or on `node` (the image's Node: node24.ts). */
export function spawnApp(name: string, args: string[], env: NodeJS.ProcessEnv, node: string = process.execPath): AppProcess {
  return spawnCommand(name, node, args, env)
}

/** Any command (nginx, npm), kept and stopped like the apps. */
export function spawnCommand(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): AppProcess {
  const child: ChildProcess = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) })
  const lines: string[] = []
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(line)
    if (lines.length > 40) lines.splice(0, lines.length - 40)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  let done = child.exitCode !== null
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((done = true), resolve())))
  const app: AppProcess = {
    name,
    pid: child.pid ?? 0,
    output: () => lines.join('\n'),
    exited: () => done,
    async stop() {
      running.delete(app)
      if (done) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exit
      clearTimeout(timer)
    },
  }
  running.add(app)
  return app
}

/** Stops every process still running (end of run, failure, Ctrl-C). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()))
}

/** Kills what is left without waiting: the last resort on process exit. */
export function killAllNow(): void {
  for (const p of running) if (!p.exited()) process.kill(p.pid, 'SIGKILL')
}

// Ports for the servers a test or the benchmark starts. The kernel's own choice (listen on
// port 0) comes from the ephemeral range, the range outgoing connections take their local
// ports from: between choosing a port and the server's listen, a connection made by any
// process could take it (EADDRINUSE). So ports come from below that range, from a slice
// of it per vitest worker (concurrent workers never offer the same port), never twice
// from one process, each checked free when offered.
const portRange = { low: 20_000, high: 32_767 }
const slices = 16
const sliceSize = Math.floor((portRange.high - portRange.low + 1) / slices)
const slice = (Number(process.env.VITEST_POOL_ID ?? process.pid) || process.pid) % slices
const sliceLow = portRange.low + slice * sliceSize
let nextInSlice = Math.floor(Math.random() * sliceSize)

function listensFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A loopback port nobody listens on now, outside the ephemeral range (see above). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < sliceSize; tries++) {
    const port = sliceLow + (nextInSlice++ % sliceSize)
    if (await listensFree(port)) return port
  }
  throw new Error(`no free port in ${sliceLow}-${sliceLow + sliceSize - 1}`)
}

/** Polls `url` until it answers 200; fails with the process's output if it exits or times out. */
export async function waitReady(app: AppProcess, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    if (app.exited()) throw new Error(`${app.name} exited before it was ready:\n${app.output()}`)
    try {
      // Connection: close: no probe connection stays open, counted toward the app's
      // maxConnections (bench/scale-connections.ts opens exactly as many).
      const res = await fetch(url, { signal: AbortSignal.timeout(2000), headers: { connection: 'close' } })
      const body = await res.text()
      if (res.status === 200) return
      last = `${res.status} ${body.slice(0, 200)}`
    } catch (err) {
      last = (err as Error).message
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${app.name} was not ready at ${url} within ${timeoutMs / 1000} s (last: ${last}):\n${app.output()}`)
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS); null when unavailable. */
export function rssMiB(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

/** CPU time (user + system) a process has used so far, in milliseconds; null when gone. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name: state is field 3; utime and stime are fields 14 and 15,
    // in clock ticks (100 per second on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return null
  }
}

/**
 * The names a process goes by: its kernel command name and the file name of the program it
 * was started as. Both are needed: Node 24 names its main thread `MainThread`, so its
 * command name is no longer `node`, while PostgreSQL's backends rewrite their command line.
 * Empty when the process is gone.
 */
export function commandNames(pid: number): string[] {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
    const program = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0', 1)[0] ?? ''
    return [comm, basename(program)]
  } catch {
    return []
  }
}

/**
 * CPU time used so far by each local process whose command name starts with one of
 * `commands` (PostgreSQL's backends, the Redis server): one map per command, in
 * milliseconds by process ID, from one pass over /proc.
 */
export function commandCpuMs<C extends string>(commands: readonly C[]): Record<C, Map<number, number>> {
  const out = Object.fromEntries(commands.map((c) => [c, new Map<number, number>()])) as Record<C, Map<number, number>>
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    const names = commandNames(Number(entry))
    const command = commands.find((c) => names.some((name) => name.startsWith(c)))
    if (command === undefined) continue
    const ms = cpuMs(Number(entry))
    if (ms !== null) out[command].set(Number(entry), ms)
  }
  return out
}

/**
 * CPU time those processes used between two readings; a process that started in between
 * counts whole, one that ended is left out. Null when there were none.
 */
export function commandCpuDeltaMs(before: Map<number, number>, after: Map<number, number>): number | null {
  if (after.size === 0) return null
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}

/** CPU time the whole machine has spent busy so far (every process and the kernel), in milliseconds. */
export function machineBusyMs(): number | null {
  try {
    // The first line of /proc/stat: user nice system idle iowait irq softirq steal …, in ticks.
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
    return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) * 10
  } catch {
    return null
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the maximum seen. */
export function sampleRss(pid: number, everyMs = 200): { stop(): number | null } {
  let max: number | null = rssMiB(pid)
  const timer = setInterval(() => {
    const v = rssMiB(pid)
    if (v !== null && (max === null || v > max)) max = v
  }, everyMs)
  return {
    stop() {
      clearInterval(timer)
      const v = rssMiB(pid)
      if (v !== null && (max === null || v > max)) max = v
      return max
    },
  }
}

/** The processes below `pid` (children, grandchildren…), from /proc. */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = []
  const walk = (p: number) => {
    for (const [child, pp] of parent) {
      if (pp !== p) continue
      out.push(child)
      walk(child)
    }
  }
  walk(pid)
  return out
}
