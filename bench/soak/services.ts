// The soak's own PostgreSQL cluster and Redis server (docs/operations.md#reliability):
// started in a temporary directory on ports of their own, so that stopping and hanging
// them touches nothing else on the machine.
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { descendants, freePort, spawnCommand, type AppProcess } from '../processes.js'

/** The newest PostgreSQL server binaries installed (Debian's layout), or PG_BIN. */
export function postgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a)) : []
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (set PG_BIN)')
  return join(root, versions[0]!, 'bin')
}

/**
 * PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user
 * (PG_USER), which owns the cluster's directory.
 */
const pgUser = process.getuid?.() === 0 ? (process.env.PG_USER ?? 'postgres') : null

function run(command: string, args: string[]): void {
  const [cmd, argv] = pgUser === null ? [command, args] : ['runuser', ['-u', pgUser, '--', command, ...args]]
  const r = spawnSync(cmd, argv, { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.status}\n${r.stdout}\n${r.stderr}`)
}

function userIds(name: string): { uid: number; gid: number } {
  const r = spawnSync('id', ['-u', name], { encoding: 'utf8' })
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' })
  if (r.status !== 0 || g.status !== 0) throw new Error(`no user ${name} to run PostgreSQL as (set PG_USER)`)
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) }
}

/** Sends `signal` to a process and every process below it. */
function signalTree(pid: number, signal: NodeJS.Signals): number[] {
  const pids = [pid, ...descendants(pid)]
  for (const p of pids) {
    try {
      process.kill(p, signal)
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

export interface PrivatePostgres {
  url: string
  /** The postmaster's process ID (RSS of the cluster: it and its backends). */
  pid(): number | null
  stop(): void
  start(): void
  /** SIGSTOP the postmaster and every backend; resume() sends SIGCONT to the same. */
  hang(): void
  resume(): void
  close(): void
}

export async function startPrivatePostgres(dir: string): Promise<PrivatePostgres> {
  const bin = postgresBin()
  const data = join(dir, 'pg')
  const port = await freePort()
  if (pgUser !== null) {
    mkdirSync(data, { mode: 0o700 })
    // The harness's directory is the root's (0700): its user must reach the cluster in it.
    chmodSync(dir, 0o711)
    const { uid, gid } = userIds(pgUser)
    chownSync(data, uid, gid)
    writeFileSync(join(dir, 'pg.log'), '')
    chownSync(join(dir, 'pg.log'), uid, gid)
  }
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  // fsync off: the soak kills processes, never the machine, so the page cache keeps what
  // was written; a stop is `immediate` (no checkpoint: recovery from the WAL at start).
  const options = `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`
  const start = () => run(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'pg.log'), '-o', options, '-w', '-t', '60', 'start'])
  const stop = () => run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'])
  start()
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` })
  await admin.connect()
  await admin.query('CREATE DATABASE soak')
  await admin.end()
  const pid = () => {
    try {
      return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0])
    } catch {
      return null
    }
  }
  let hung: number[] = []
  const resume = () => {
    for (const p of hung) {
      try {
        process.kill(p, 'SIGCONT')
      } catch {
        // gone
      }
    }
    hung = []
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/soak`,
    pid,
    stop,
    start,
    hang() {
      const p = pid()
      if (p !== null) hung = signalTree(p, 'SIGSTOP')
    },
    resume,
    close() {
      resume()
      try {
        stop()
      } catch {
        // already stopped
      }
    },
  }
}

export interface PrivateRedis {
  url: string
  pid(): number | null
  stop(): Promise<void>
  start(): void
  hang(): void
  resume(): void
  close(): Promise<void>
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  let server: AppProcess | null = null
  const start = () => {
    server = spawnCommand('redis', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { PATH: process.env.PATH })
  }
  const waitUp = async () => {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const r = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' })
      if (r.stdout.trim() === 'PONG') return
      await new Promise((res) => setTimeout(res, 100))
    }
    throw new Error(`redis-server did not start on ${port}`)
  }
  start()
  await waitUp()
  const resume = () => {
    try {
      if (server) process.kill(server.pid, 'SIGCONT')
    } catch {
      // gone
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: () => (server && !server.exited() ? server.pid : null),
    async stop() {
      await server?.stop()
      server = null
    },
    start,
    hang() {
      if (server) process.kill(server.pid, 'SIGSTOP')
    },
    resume,
    async close() {
      resume()
      await server?.stop()
    },
  }
}
