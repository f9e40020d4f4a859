// Shutdown lines are JSON like every other line (README "Dependability"): an operator's
// log pipeline parses each line, and a plain-text "stopped" line would be lost or garbled.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { freePort } from '../helpers/stack.js'

const mainJs = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url))

it('every line the core writes, from start to SIGTERM, is JSON, and the last says it stopped', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kigo-shutdown-'))
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, KIGO_DATA_DIR: dir, KIGO_CORE_PORT: String(port), KIGO_CORE_METRICS_PORT: '0', KIGO_SECRET_KEY: randomBytes(32).toString('base64'), KIGO_ADMIN_TOKEN: randomBytes(24).toString('base64url') }
  const child = spawn(process.execPath, [mainJs, 'core'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  try {
    const deadline = Date.now() + 30_000
    while (!(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`core did not start:\n${output}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    const lines = output.split('\n').filter((l) => l.trim() !== '')
    expect(lines.length).toBeGreaterThan(1)
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string; signal?: string })
    expect(parsed.at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGTERM' })
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)
