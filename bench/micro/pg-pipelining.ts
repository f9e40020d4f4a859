// Benchmark: statements outside a transaction through the project's SQL layer
// (src/common/sql.ts), the two ways it can send them: on pipelined connections (openDb,
// what the apps run) and checked out of a pg.Pool one statement at a time (postgresDbOn
// over a pool of the same size, the way before). Both name and prepare the statement
// alike. CALLERS concurrent callers (default 8,32) each run statuses/show's query for
// one entry over and over; per statement: CPU of this process, CPU of the whole machine
// (/proc/stat, so PostgreSQL's share counts too), and statements a second.
// `DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node dist/bench/micro/pg-pipelining.js [rounds]`
// (default 7) prints each way's medians over the rounds, the ways taken in turn, the
// order turned each round. N statements per round (default 20,000), POOL connections
// (default 10, the apps' default: the pipelined way gets half of them for statements, the
// other half stays for transactions; the pool way all ten).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { defaultDbTimeouts, openDb, postgresConnectionConfig, postgresDbOn, type Db } from '../../src/common/sql.js'
import { openContentStore } from '../../src/core/store/index.js'
import { entryByIdSql } from '../../src/core/store/sql-content-store.js'
import { machineBusyMs } from '../processes.js'
import { median } from '../report.js'

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error('pg-pipelining: DATABASE_URL is required')
  process.exit(1)
}
const rounds = Number(process.argv[2] ?? 7)
const N = Number(process.env.N ?? 20_000)
const size = Number(process.env.POOL ?? 10)
const callers = (process.env.CALLERS ?? '8,32').split(',').map(Number)

// One entry to show, written through the core's own store (which migrates the database).
const dataDir = mkdtempSync(join(tmpdir(), 'kigo-pg-pipelining-'))
const seeding = await openContentStore({ databaseUrl, dataDir })
const entry = await seeding.createEntry(
  { authorId: 'bench', authorName: 'Bench', keyword: 'bench', source: 'web', deployment: 'domestic', inReplyToStatusId: null },
  [],
  () => 'hello from the pg-pipelining benchmark',
)
await seeding.close()
const id = entry.id

/** The machine's busy CPU time, ms; this benchmark needs /proc/stat to say it. */
function machineBusy(): number {
  const ms = machineBusyMs()
  if (ms === null) throw new Error('/proc/stat is not readable: the machine\'s CPU cannot be measured')
  return ms
}

const ways: Array<{ name: string; db: Db }> = []
try {
  // The way before: a pool with the connection settings the apps give theirs.
  const pool = new pg.Pool({ ...postgresConnectionConfig(databaseUrl, defaultDbTimeouts), max: size })
  pool.on('error', () => undefined)
  ways.push({ name: 'pipelined', db: await openDb({ databaseUrl, dataDir: '/nonexistent', maxConnections: size }) })
  ways.push({ name: 'pool', db: postgresDbOn(pool) })

  for (const c of callers) {
    const round = async (db: Db, n: number) => {
      let left = n
      const caller = async () => {
        while (left-- > 0) if ((await db.query(entryByIdSql, [id])).length !== 1) throw new Error('no row')
      }
      const cpu0 = process.cpuUsage()
      const busy0 = machineBusy()
      const t0 = performance.now()
      await Promise.all(Array.from({ length: c }, caller))
      const seconds = (performance.now() - t0) / 1000
      const cpu = process.cpuUsage(cpu0)
      return { cpu: (cpu.user + cpu.system) / n, machine: ((machineBusy() - busy0) * 1000) / n, rate: n / seconds }
    }
    for (const w of ways) await round(w.db, Math.min(N, 4000))
    const results = new Map(ways.map((w) => [w.name, [] as Array<{ cpu: number; machine: number; rate: number }>]))
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ways : [...ways].reverse()
      for (const w of order) results.get(w.name)!.push(await round(w.db, N))
    }
    console.log(`${c} callers, ${N} statements a round, ${rounds} rounds, ${size} connections:`)
    for (const [name, rs] of results) {
      const m = (k: 'cpu' | 'machine' | 'rate') => median(rs.map((x) => x[k]))
      console.log(`  ${name.padEnd(10)} this process ${m('cpu').toFixed(1)} µs, machine ${m('machine').toFixed(1)} µs per statement; ${m('rate').toFixed(0)} statements/s`)
    }
  }
} finally {
  for (const w of ways) await w.db.close()
  rmSync(dataDir, { recursive: true, force: true })
}
