// One process at a time on an embedded data directory (docs/operations.md#embedded-mode):
// PGlite has no lock of its own, so a second process on the same directory would write the
// same files from another copy of the database and lose the store. Real processes: kigo as
// `npm start` runs it, a second one, `kigo export` beside it, and one killed with SIGKILL.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnApp, waitReady, type AppProcess } from '../../bench/processes.js'
import { main as kigoCli } from '../../src/cli/kigo.js'
import { DataDirInUse } from '../../src/common/data-dir-lock.js'
import { openDb } from '../../src/common/sql.js'
import { stackEnv } from '../helpers/stack.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const mainJs = join(root, 'dist/src/main.js')

let work: string
const running: AppProcess[] = []

beforeAll(() => {
  // The processes run the built code: built first when a source changed since.
  const build = spawnSync(process.execPath, ['bin/build.js', '--if-stale'], { cwd: root, encoding: 'utf8', timeout: 170_000 })
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`)
  work = mkdtempSync(join(tmpdir(), 'kigo-lock-'))
}, 180_000)

afterAll(async () => {
  for (const app of running) await app.stop()
  rmSync(work, { recursive: true, force: true })
})

/** kigo on `dataDir`; a later start on the same store passes the first one's key. */
async function start(dataDir: string, secretKey?: string): Promise<{ app: AppProcess; url: string; secretKey: string }> {
  const { env, gatewayPort } = await stackEnv(dataDir, { LOG_LEVEL: 'warn', ...(secretKey ? { KIGO_SECRET_KEY: secretKey } : {}) })
  const app = spawnApp('kigo', [mainJs, 'embedded'], { PATH: process.env.PATH, ...env, KIGO_GATEWAY_BIND: '127.0.0.1' })
  running.push(app)
  return { app, url: `http://127.0.0.1:${gatewayPort}`, secretKey: env.KIGO_SECRET_KEY! }
}

async function exited(app: AppProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!app.exited() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  return app.exited()
}

describe('an embedded data directory, open in one process at a time', () => {
  it('refuses a second kigo and an export while kigo runs, and is taken over once that kigo is killed', async () => {
    const dataDir = join(work, 'data')
    const first = await start(dataDir)
    await waitReady(first.app, `${first.url}/readyz`)
    expect(readFileSync(join(dataDir, 'db.lock'), 'utf8').trim()).toBe(String(first.app.pid))

    // A second kigo on the same directory stops at start, naming the first.
    const second = await start(dataDir, first.secretKey)
    expect(await exited(second.app, 30_000)).toBe(true)
    expect(second.app.output()).toContain(`the data directory ${dataDir} is in use by process ${first.app.pid}`)

    // kigo export beside it writes nothing, and says why.
    let stderr = ''
    const code = await kigoCli(['export', '--from', dataDir, '--out', join(work, 'dump.gz')], { KIGO_SECRET_KEY: first.secretKey }, {
      stdout: { write: () => undefined },
      stderr: { write: (s: string) => (stderr += s) },
    })
    expect(code).not.toBe(0)
    expect(stderr).toContain(`is in use by process ${first.app.pid}`)
    expect(existsSync(join(work, 'dump.gz'))).toBe(false)
    expect(existsSync(join(work, 'dump.gz.partial'))).toBe(false)
    // The first kigo goes on serving.
    expect((await fetch(`${first.url}/api/statuses/public_timeline.json`)).status).toBe(200)

    // Killed, it leaves its lock behind; the next kigo takes it over and serves the same store.
    process.kill(first.app.pid, 'SIGKILL')
    expect(await exited(first.app, 10_000)).toBe(true)
    expect(existsSync(join(dataDir, 'db.lock'))).toBe(true)
    const third = await start(dataDir, first.secretKey)
    await waitReady(third.app, `${third.url}/readyz`)
    expect(readFileSync(join(dataDir, 'db.lock'), 'utf8').trim()).toBe(String(third.app.pid))
    expect((await fetch(`${third.url}/api/statuses/public_timeline.json`)).status).toBe(200)
    // Stopped, it removes its lock.
    await third.app.stop()
    expect(existsSync(join(dataDir, 'db.lock'))).toBe(false)
  }, 120_000)

  it('in one process: refuses a directory whose lock names another live process, takes over one naming a dead process or its own PID', async () => {
    const dataDir = join(work, 'in-process')
    mkdirSync(dataDir, { recursive: true })
    const lock = join(dataDir, 'db.lock')
    // The test runner that started this worker: alive, and not this process.
    writeFileSync(lock, `${process.ppid}\n`)
    const refused = await openDb({ dataDir }).then(() => null, (err: unknown) => err)
    expect(refused).toBeInstanceOf(DataDirInUse)
    expect((refused as DataDirInUse).pid).toBe(process.ppid)
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.ppid))
    const gone = spawnSync(process.execPath, ['-e', '']).pid
    for (const stale of [gone, process.pid]) {
      writeFileSync(lock, `${stale}\n`)
      const db = await openDb({ dataDir })
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }])
      expect(readFileSync(lock, 'utf8').trim()).toBe(String(process.pid))
      await db.close()
      expect(existsSync(lock)).toBe(false)
    }
  }, 120_000)
})
